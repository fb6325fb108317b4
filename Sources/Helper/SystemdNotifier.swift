#if canImport(Glibc)
import Glibc
#endif
import Logging
import ServiceLifecycle

/// Tells systemd how start-up, reloads and shutdown are going, for `Type=notify`
/// (sd_notify(3); the protocol is one Unix datagram of `KEY=VALUE` lines per message).
///
/// Written here rather than linking libsystemd: the protocol is a single `sendto`, and the helper
/// should not need a C library for it. Without `$NOTIFY_SOCKET` (started by hand, by a test or by
/// `make run`) every call does nothing.
public struct SystemdNotifier: Sendable {
    /// The socket address bytes to send to, or nil when there is nobody to tell.
    let destination: NotifyDestination?
    let logger: Logger

    /// - Parameter environment: the process environment; `NOTIFY_SOCKET` is read from it.
    public init(environment: [String: String], logger: Logger) {
        self.logger = logger
        guard let value = environment["NOTIFY_SOCKET"], !value.isEmpty else {
            destination = nil
            return
        }
        do {
            destination = try NotifyDestination(value)
        } catch {
            // A malformed variable must not stop a DNS server; systemd will time the start out and say so.
            logger.warning("NOTIFY_SOCKET is not usable; systemd will not hear that the helper is ready", metadata: ["error": "\(error)"])
            destination = nil
        }
    }

    /// `READY=1`: every listener is bound and queries are answered (also ends a reload).
    public func ready(status: String) { send(["READY=1", "STATUS=\(status)"]) }

    /// `RELOADING=1` with the monotonic time systemd (≥ 253) uses to match the reload it asked for.
    public func reloading(status: String) {
        send(["RELOADING=1", "MONOTONIC_USEC=\(Self.monotonicMicroseconds())", "STATUS=\(status)"])
    }

    /// `STOPPING=1`: shutdown has begun (queries in flight are being drained).
    public func stopping(status: String) { send(["STOPPING=1", "STATUS=\(status)"]) }

    /// A free-form `STATUS=` line, shown by `systemctl status`.
    public func status(_ text: String) { send(["STATUS=\(text)"]) }

    /// Sends one message of `KEY=VALUE` lines. Failures are logged, never thrown: losing a status
    /// line must not take DNS down.
    public func send(_ assignments: [String]) {
        guard let destination else { return }
        do throws(NotifyError) {
            try destination.send(Array((assignments.joined(separator: "\n") + "\n").utf8))
        } catch {
            logger.warning("could not notify systemd", metadata: ["error": "\(error)"])
        }
    }

    static func monotonicMicroseconds() -> UInt64 {
        var now = timespec()
        clock_gettime(CLOCK_MONOTONIC, &now)
        return UInt64(now.tv_sec) * 1_000_000 + UInt64(now.tv_nsec) / 1_000
    }
}

/// Why a notification could not be sent.
public enum NotifyError: Error, Sendable, Equatable, CustomStringConvertible {
    /// `NOTIFY_SOCKET` is neither an absolute path nor an abstract name (`@name`).
    case notASocketAddress(String)
    /// The name does not fit in `sun_path` (108 bytes on Linux).
    case tooLong(String)
    /// `socket` or `sendto` failed.
    case system(operation: String, errno: Int32)

    public var description: String {
        switch self {
        case .notASocketAddress(let value):
            "NOTIFY_SOCKET=\(value) is neither an absolute path nor an abstract socket name starting with @"
        case .tooLong(let value):
            "NOTIFY_SOCKET=\(value) is longer than a Unix socket address allows (107 bytes)"
        case .system(let operation, let code):
            "\(operation) on NOTIFY_SOCKET failed: \(String(cString: strerror(code)))"
        }
    }
}

/// The `sockaddr_un` of `$NOTIFY_SOCKET`.
///
/// A leading `@` names a socket in the abstract namespace: its `sun_path` starts with a NUL byte
/// and the address length counts only the bytes of the name (unix(7)), without a trailing NUL.
struct NotifyDestination: Sendable, Equatable {
    /// The bytes of `sun_path` (for an abstract name, starting with 0).
    let path: [UInt8]

    init(_ value: String) throws(NotifyError) {
        var bytes = Array(value.utf8)
        if bytes.first == UInt8(ascii: "@") {
            bytes[0] = 0
        } else if bytes.first != UInt8(ascii: "/") {
            throw .notASocketAddress(value)
        }
        // Paths need room for their terminating NUL; abstract names use every byte.
        let capacity = MemoryLayout.size(ofValue: sockaddr_un().sun_path)
        guard bytes.count < capacity || (bytes.first == 0 && bytes.count == capacity) else { throw .tooLong(value) }
        path = bytes
    }

    var isAbstract: Bool { path.first == 0 }

    /// The length to pass to `sendto`: the family field plus the name (and a NUL for a path).
    var addressLength: socklen_t {
        socklen_t(MemoryLayout<sa_family_t>.size + path.count + (isAbstract ? 0 : 1))
    }

    func send(_ message: [UInt8]) throws(NotifyError) {
        let descriptor = socket(AF_UNIX, Int32(SOCK_DGRAM.rawValue) | Int32(SOCK_CLOEXEC.rawValue), 0)
        guard descriptor >= 0 else { throw .system(operation: "socket", errno: errno) }
        defer { close(descriptor) }
        var address = sockaddr_un()
        address.sun_family = sa_family_t(AF_UNIX)
        withUnsafeMutableBytes(of: &address.sun_path) { raw in raw.copyBytes(from: path) }
        let length = addressLength
        let sent = withUnsafePointer(to: &address) { pointer in
            pointer.withMemoryRebound(to: sockaddr.self, capacity: 1) { socketAddress in
                message.withUnsafeBytes { bytes in
                    sendto(descriptor, bytes.baseAddress, bytes.count, Int32(MSG_NOSIGNAL), socketAddress, length)
                }
            }
        }
        guard sent >= 0 else { throw .system(operation: "sendto", errno: errno) }
    }
}

/// Sends `STOPPING=1` as soon as the helper's graceful shutdown begins (SIGTERM from
/// `systemctl stop`), so `systemctl status` shows "deactivating" while queries drain.
struct SystemdStoppingService: Service {
    let notifier: SystemdNotifier

    func run() async throws {
        // Throws only on cancellation, which also means the helper is stopping.
        try? await gracefulShutdown()
        notifier.stopping(status: "stopping: answering the queries already received")
    }
}
