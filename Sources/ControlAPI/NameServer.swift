/// A DNS server the system resolver asks: a literal address and a port.
public struct NameServer: Hashable, Sendable, Codable, CustomStringConvertible {
    public var host: String
    public var port: Int

    public init(host: String, port: Int = 53) {
        self.host = host
        self.port = port
    }

    public var description: String {
        let shown = host.contains(":") ? "[\(host)]" : host
        return port == 53 ? host : "\(shown):\(port)"
    }
}
