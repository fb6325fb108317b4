#if canImport(Glibc)
import Glibc
#elseif canImport(Darwin)
import Darwin
#endif

/// A blocking stream connection to a Unix domain socket with an idle timeout on every read and
/// write. Plain POSIX calls keep the CLI free of SwiftNIO and quick to start.
final class UnixSocketConnection {
    private let descriptor: Int32
    let path: String

    /// Connects to `path`, waiting at most `timeoutSeconds`.
    init(path: String, timeoutSeconds: Double) throws(ControlClientError) {
        self.path = path
        var address = sockaddr_un()
        address.sun_family = sa_family_t(AF_UNIX)
        let capacity = MemoryLayout.size(ofValue: address.sun_path)
        let bytes = Array(path.utf8)
        // sun_path holds the path and its terminating NUL (unix(7)).
        guard !bytes.isEmpty, bytes.count < capacity, !bytes.contains(0) else {
            throw .socketPathInvalid(path: path, limit: capacity - 1)
        }
        withUnsafeMutableBytes(of: &address.sun_path) { raw in
            raw.copyBytes(from: bytes)
            raw[bytes.count] = 0
        }
        #if canImport(Glibc)
        let fd = socket(AF_UNIX, Int32(SOCK_STREAM.rawValue) | Int32(SOCK_CLOEXEC.rawValue), 0)
        #else
        let fd = socket(AF_UNIX, SOCK_STREAM, 0)
        #endif
        guard fd >= 0 else { throw .io(path: path, operation: "create a socket", errno: errno) }
        descriptor = fd
        Self.setTimeout(fd, seconds: timeoutSeconds)
        let result = withUnsafePointer(to: &address) { pointer in
            pointer.withMemoryRebound(to: sockaddr.self, capacity: 1) {
                connect(fd, $0, socklen_t(MemoryLayout<sockaddr_un>.size))
            }
        }
        if result != 0 {
            let code = errno
            close(fd)
            switch code {
            case ENOENT, ENOTDIR: throw .helperUnreachable(path: path, reason: .socketMissing)
            case ECONNREFUSED: throw .helperUnreachable(path: path, reason: .nobodyListening)
            case EACCES, EPERM: throw .permissionDenied(path: path)
            case EAGAIN, ETIMEDOUT: throw .timedOut(path: path, seconds: timeoutSeconds)
            default: throw .io(path: path, operation: "connect to", errno: code)
            }
        }
        // Before a byte of the request leaves (a block's reason, a profile's name): the server
        // must be root or this user (a helper started with `make run`). A socket served by anyone
        // else is not the helper, wherever it sits: its folder may belong to that user (SPEC §11).
        let server = Self.serverUID(fd)
        guard let server, server == 0 || server == getuid() else {
            // `descriptor` is set, so deinit closes it.
            throw .untrustedServer(path: path, uid: server)
        }
    }

    /// The uid of the process that made the listening socket (SO_PEERCRED, unix(7)): the kernel
    /// records it at `listen`, so the server cannot forge it. Nil when it cannot be read.
    static func serverUID(_ fd: Int32) -> uid_t? {
        // `struct ucred { pid_t pid; uid_t uid; gid_t gid; }`: Glibc's module does not export it
        // (it needs _GNU_SOURCE), so it is read as three contiguous 32-bit words.
        var words: (UInt32, UInt32, UInt32) = (0, 0, 0)
        var length = socklen_t(MemoryLayout<(UInt32, UInt32, UInt32)>.size)
        guard getsockopt(fd, SOL_SOCKET, SO_PEERCRED, &words, &length) == 0,
              length == socklen_t(MemoryLayout<(UInt32, UInt32, UInt32)>.size) else { return nil }
        return words.1
    }

    deinit { close(descriptor) }

    /// SO_RCVTIMEO/SO_SNDTIMEO bound every blocking call, so a hung helper cannot hang the CLI.
    private static func setTimeout(_ fd: Int32, seconds: Double) {
        let whole = max(0, seconds.rounded(.down))
        var value = timeval(tv_sec: Int(whole), tv_usec: Int((seconds - whole) * 1_000_000))
        if value.tv_sec == 0 && value.tv_usec == 0 { value.tv_usec = 1000 }
        _ = setsockopt(fd, SOL_SOCKET, SO_RCVTIMEO, &value, socklen_t(MemoryLayout<timeval>.size))
        _ = setsockopt(fd, SOL_SOCKET, SO_SNDTIMEO, &value, socklen_t(MemoryLayout<timeval>.size))
    }

    func setIdleTimeout(seconds: Double) { Self.setTimeout(descriptor, seconds: seconds) }

    func writeAll(_ bytes: [UInt8], timeoutSeconds: Double) throws(ControlClientError) {
        var offset = 0
        while offset < bytes.count {
            let written = bytes[offset...].withUnsafeBytes { raw in
                // MSG_NOSIGNAL: a helper that hangs up must give EPIPE, not kill the CLI with SIGPIPE.
                send(descriptor, raw.baseAddress, raw.count, Int32(MSG_NOSIGNAL))
            }
            if written < 0 {
                let code = errno
                if code == EINTR { continue }
                if code == EAGAIN || code == EWOULDBLOCK { throw .timedOut(path: path, seconds: timeoutSeconds) }
                throw .io(path: path, operation: "send the request to", errno: code)
            }
            offset += written
        }
    }

    /// Reads what is available, up to `capacity` bytes; an empty array means the peer closed.
    func readSome(capacity: Int = 64 * 1024, timeoutSeconds: Double) throws(ControlClientError) -> [UInt8] {
        var chunk = [UInt8](repeating: 0, count: capacity)
        while true {
            let got = chunk.withUnsafeMutableBytes { recv(descriptor, $0.baseAddress, capacity, 0) }
            if got >= 0 { return Array(chunk[0..<got]) }
            let code = errno
            if code == EINTR { continue }
            if code == EAGAIN || code == EWOULDBLOCK { throw .timedOut(path: path, seconds: timeoutSeconds) }
            if code == ECONNRESET { return [] }
            throw .io(path: path, operation: "read the answer from", errno: code)
        }
    }
}
