import NIOCore

/// An `ADDR:PORT` or `[V6ADDR]:PORT` as given on the command line (SPEC §13).
public struct HostPort: Hashable, Sendable, CustomStringConvertible {
    public var host: String
    public var port: Int

    public init(host: String, port: Int) {
        self.host = host
        self.port = port
    }

    /// Parses `ADDR:PORT`, `[V6]:PORT`, and when `defaultPort` is given also `ADDR`, `V6` and `[V6]`.
    public init(parsing text: String, defaultPort: Int? = nil) throws(HostPortError) {
        var host = Substring(text)
        var portText: Substring?
        if host.hasPrefix("[") {
            guard let close = host.firstIndex(of: "]") else { throw .malformed(text) }
            let rest = host[host.index(after: close)...]
            host = host[host.index(after: host.startIndex)..<close]
            if !rest.isEmpty {
                guard rest.hasPrefix(":") else { throw .malformed(text) }
                portText = rest.dropFirst()
            }
        } else if host.filter({ $0 == ":" }).count == 1, let colon = host.lastIndex(of: ":") {
            portText = host[host.index(after: colon)...]
            host = host[..<colon]
        }
        let port: Int
        if let portText {
            guard let value = Int(portText), (0...65535).contains(value) else { throw .badPort(text) }
            port = value
        } else if let defaultPort {
            port = defaultPort
        } else {
            throw .missingPort(text)
        }
        // Only literal addresses: a name would need the very resolver we are.
        guard (try? SocketAddress(ipAddress: String(host), port: port)) != nil else { throw .notAnAddress(text) }
        self.host = String(host)
        self.port = port
    }

    public func socketAddress() throws -> SocketAddress {
        try SocketAddress(ipAddress: host, port: port)
    }

    /// `127.0.0.1:53` or `[::1]:53`.
    public var description: String {
        host.contains(":") ? "[\(host)]:\(port)" : "\(host):\(port)"
    }
}

public enum HostPortError: Error, Sendable, CustomStringConvertible, Equatable {
    case malformed(String)
    case badPort(String)
    case missingPort(String)
    case notAnAddress(String)

    public var description: String {
        switch self {
        case .malformed(let text): "'\(text)' is not ADDR:PORT or [IPV6]:PORT"
        case .badPort(let text): "'\(text)' has a port outside 0…65535"
        case .missingPort(let text): "'\(text)' needs a port, as in 127.0.0.1:5300"
        case .notAnAddress(let text): "'\(text)' is not a numeric IPv4 or IPv6 address; names cannot be used here"
        }
    }
}
