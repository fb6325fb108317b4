/// How a query reached us; it decides the reply size limit (RFC 1035 §4.2).
public enum DNSTransport: Sendable {
    case udp
    case tcp
}
