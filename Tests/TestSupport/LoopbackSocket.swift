#if canImport(Glibc)
import Glibc
#endif

/// A TCP connection to 127.0.0.1:`port` whose reads give up after `receiveTimeout` seconds, as a
/// raw descriptor: the page and connection-limit tests send partial or slow requests on purpose,
/// which no HTTP client library lets them do. Returns -1 when the connection was refused.
public func connectLoopbackTCP(port: Int, receiveTimeout seconds: Int = 10) -> Int32 {
    let fd = socket(AF_INET, Int32(SOCK_STREAM.rawValue), 0)
    guard fd >= 0 else { return -1 }
    var address = sockaddr_in()
    address.sin_family = sa_family_t(AF_INET)
    address.sin_addr.s_addr = inet_addr("127.0.0.1")
    address.sin_port = in_port_t(UInt16(port).bigEndian)
    var timeout = timeval(tv_sec: seconds, tv_usec: 0)
    setsockopt(fd, SOL_SOCKET, SO_RCVTIMEO, &timeout, socklen_t(MemoryLayout<timeval>.size))
    let connected = withUnsafePointer(to: &address) {
        $0.withMemoryRebound(to: sockaddr.self, capacity: 1) { connect(fd, $0, socklen_t(MemoryLayout<sockaddr_in>.size)) }
    }
    guard connected == 0 else {
        close(fd)
        return -1
    }
    return fd
}
