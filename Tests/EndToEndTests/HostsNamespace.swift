import Foundation
import Testing

/// A hosts-mode helper whose /etc/hosts is a temporary file, in a private mount namespace (and,
/// with a resolver, a private network namespace), so glibc's own lookups (`getent`) can be asked
/// while the real /etc/hosts is never touched (SPEC §10).
///
/// - /etc gets an overlay whose upper layer is in the scratch folder: the backups the helper saves
///   next to the file (/etc/hosts.scrolloff.*) land there, not in the real /etc.
/// - With `resolver`, the namespace has its own loopback (plus 10.99.0.1, so that `getaddrinfo`'s
///   AI_ADDRCONFIG sees an IPv4 address) and a dnsmasq on 127.0.0.1:53 that answers instagram.com
///   with ``realAddress``; /etc/resolv.conf points at it. A name the hosts file does not hold then
///   gets its real address, the way a laptop's resolver gives it.
/// - The helper runs with TZ=UTC plus `environment` (libfaketime's, for a chosen wall clock).
final class HostsNamespace: @unchecked Sendable {
    static let realAddress = "10.20.30.40"

    let scratch: Scratch
    /// The file bind-mounted over /etc/hosts.
    let hosts: String
    let helper: HostsModeEndToEndTests.HostsHelper
    let resolver: Bool
    /// The overlay's upper layer: what the helper wrote into /etc besides the file (its backups).
    let etcUpper: String
    private let dnsmasqPidFile: String

    init(scratch: Scratch, hostsBytes: [UInt8], resolver: Bool = true, environment: [String: String] = [:]) throws {
        self.scratch = scratch
        self.resolver = resolver
        hosts = "\(scratch.path)/hosts"
        dnsmasqPidFile = "\(scratch.path)/dnsmasq-ns.pid"
        try HostsModeEndToEndTests.write(hostsBytes, to: hosts)
        let upper = "\(scratch.path)/etc-upper", work = "\(scratch.path)/etc-work"
        etcUpper = upper
        for folder in [upper, work] { try FileManager.default.createDirectory(atPath: folder, withIntermediateDirectories: true) }
        var script = "mount --make-rprivate / && mount -t overlay overlay -o lowerdir=/etc,upperdir=\(upper),workdir=\(work) /etc"
            // A container's /etc may lack a file the test binds over; the overlay makes it in its upper layer.
            + " && touch /etc/hosts /etc/resolv.conf /etc/host.conf && mount --bind \(hosts) /etc/hosts"
        if resolver {
            let resolv = "\(scratch.path)/resolv.conf"
            try Data("nameserver 127.0.0.1\n".utf8).write(to: URL(fileURLWithPath: resolv))
            // dnsmasq forks into the background once it listens, so the lookups below find it up.
            script += " && ip link set lo up && ip addr add 10.99.0.1/32 dev lo && mount --bind \(resolv) /etc/resolv.conf"
                + " && /usr/sbin/dnsmasq --conf-file=/dev/null --port=53 --listen-address=127.0.0.1 --bind-interfaces --no-resolv"
                + " --no-hosts --pid-file=\(dnsmasqPidFile) --address=/instagram.com/\(Self.realAddress)"
        }
        let settings = (["TZ": "UTC"].merging(environment) { $1 }).sorted { $0.key < $1.key }.map { "'\($0.key)=\($0.value)'" }
        // `exec` all the way: the pid the test signals and enters is the helper's own.
        script += " && exec /usr/bin/env \(settings.joined(separator: " ")) \"$0\" \"$@\""
        do {
            helper = try HostsModeEndToEndTests.HostsHelper(
                scratch: scratch, hostsFile: nil, wrapper: ["/usr/bin/unshare", resolver ? "-mn" : "-m", "/bin/sh", "-c", script])
        } catch {
            Self.kill(pidFile: dnsmasqPidFile)
            throw error
        }
    }

    /// `getent ARGS` inside the namespace; with `multi`, /etc/host.conf says `multi on` or
    /// `multi off` for this one lookup (glibc's default without the file is off; Debian ships on).
    func getent(_ arguments: [String], multi: Bool? = nil) throws -> Outcome {
        let pid = String(helper.child.process.pid)
        var command = ["-t", pid, "-m"] + (resolver ? ["-n"] : [])
        if let multi {
            let conf = "\(scratch.path)/host.conf.\(multi ? "on" : "off")"
            try Data("multi \(multi ? "on" : "off")\n".utf8).write(to: URL(fileURLWithPath: conf))
            command += ["/usr/bin/unshare", "-m", "/bin/sh", "-c", "mount --bind \(conf) /etc/host.conf && exec /usr/bin/getent \"$@\"", "getent"]
        } else {
            command += ["/usr/bin/getent"]
        }
        return try runWithStatus("/usr/bin/nsenter", command + arguments)
    }

    /// The addresses `getent ahostsv4 NAME` gives (getaddrinfo, as browsers ask), in its order, once each.
    func addresses(_ name: String, multi: Bool? = nil) throws -> [String] {
        let lines = try getent(["ahostsv4", name], multi: multi).output.split(separator: "\n")
        var seen: [String] = []
        for line in lines {
            guard let address = line.split(separator: " ").first.map(String.init), !seen.contains(address) else { continue }
            seen.append(address)
        }
        return seen
    }

    func stop() {
        helper.stop()
        Self.kill(pidFile: dnsmasqPidFile)
    }

    deinit { stop() }

    /// Ends the namespace's dnsmasq (started by this test, named by its pid file).
    static func kill(pidFile: String) {
        guard let text = try? String(contentsOfFile: pidFile, encoding: .utf8),
              let pid = Int32(text.trimmingCharacters(in: .whitespacesAndNewlines)), pid > 1 else { return }
        _ = Glibc.kill(pid, SIGTERM)
        try? FileManager.default.removeItem(atPath: pidFile)
    }
}
