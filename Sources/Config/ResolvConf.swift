import Foundation
import Sinkhole

/// Default upstreams from `/etc/resolv.conf` (SPEC §13: "upstreams from /etc/resolv.conf (never itself)").
public enum ResolvConf {
    /// The `nameserver` lines of `text`, in order, on port 53, minus any that would be this server
    /// itself: the same address as a listen address on port 53, or any loopback address when we
    /// listen on a wildcard address on port 53. Forwarding to ourselves would loop every query.
    /// Other local resolvers (systemd-resolved on 127.0.0.53, say) stay usable as upstreams.
    public static func upstreams(fromText text: String, excluding listen: [HostPort]) -> [HostPort] {
        var result: [HostPort] = []
        for line in text.split(whereSeparator: \.isNewline) {
            let fields = line.split(whereSeparator: { $0 == " " || $0 == "\t" })
            guard fields.count >= 2, fields[0] == "nameserver" else { continue }
            // A scope suffix (fe80::1%eth0) cannot be carried in a SocketAddress literal; skip it.
            let address = String(fields[1])
            guard !address.contains("%"), let server = try? HostPort(parsing: address, defaultPort: 53) else { continue }
            if isOurselves(server, listen: listen) || result.contains(server) { continue }
            result.append(server)
        }
        return result
    }

    public static func upstreams(path: String = "/etc/resolv.conf", excluding listen: [HostPort]) -> [HostPort] {
        guard let text = try? String(contentsOfFile: path, encoding: .utf8) else { return [] }
        return upstreams(fromText: text, excluding: listen)
    }

    static func isOurselves(_ server: HostPort, listen: [HostPort]) -> Bool {
        listen.contains { ours in
            guard ours.port == server.port else { return false }
            if ours.host == server.host { return true }
            let wildcard = ours.host == "0.0.0.0" || ours.host == "::"
            let loopback = server.host.hasPrefix("127.") || server.host == "::1"
            return wildcard && loopback
        }
    }
}
