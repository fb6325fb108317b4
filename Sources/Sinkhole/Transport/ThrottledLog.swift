#if canImport(Glibc)
import Glibc
#endif
import Logging
import NIOCore
import NIOConcurrencyHelpers

/// Logs a recurring condition once, then at most once per `interval`, with how often it happened
/// in between. A flood of refused connections is thousands of events a second: a line each would
/// fill the disk and hide everything else, none would leave the admin guessing.
public final class ThrottledLog: Sendable {
    private struct Entry {
        var lastLogged: NIODeadline
        var suppressed: Int
    }

    let logger: Logger
    let interval: TimeAmount
    private let entries = NIOLockedValueBox<[String: Entry]>([:])

    public init(logger: Logger, interval: TimeAmount = .seconds(60)) {
        self.logger = logger
        self.interval = interval
    }

    /// Logs `message` under `key` unless a line for `key` was logged less than `interval` ago.
    public func warning(_ key: String, _ message: @autoclosure () -> Logger.Message, metadata: @autoclosure () -> Logger.Metadata = [:]) {
        let now = NIODeadline.now()
        let suppressed: Int? = entries.withLockedValue { entries in
            if var entry = entries[key], now - entry.lastLogged < interval {
                entry.suppressed += 1
                entries[key] = entry
                return nil
            }
            let before = entries[key]?.suppressed ?? 0
            entries[key] = Entry(lastLogged: now, suppressed: 0)
            return before
        }
        guard let suppressed else { return }
        var fields = metadata()
        if suppressed > 0 { fields["events.since_last_line"] = "\(suppressed)" }
        logger.warning(message(), metadata: fields)
    }
}

/// Logs, once per minute, that `accept` failed for want of file descriptors (EMFILE, ENFILE).
///
/// NIO leaves a listener that hits the descriptor limit readable, so without a pause it would
/// retry `accept` in a tight loop; `AcceptBackoffHandler`, placed after this handler, waits a
/// second before the next accept. Connections meanwhile queue in the kernel's backlog.
public final class AcceptFailureLogger: ChannelInboundHandler, RemovableChannelHandler {
    public typealias InboundIn = any Channel

    let log: ThrottledLog
    let listener: String

    public init(log: ThrottledLog, listener: String) {
        self.log = log
        self.listener = listener
    }

    public func channelRead(context: ChannelHandlerContext, data: NIOAny) {
        context.fireChannelRead(data)
    }

    public func errorCaught(context: ChannelHandlerContext, error: any Error) {
        if let io = error as? IOError, io.errnoCode == EMFILE || io.errnoCode == ENFILE {
            let which = io.errnoCode == EMFILE ? "this process's" : "the system's"
            log.warning(
                "descriptor-limit:\(listener)",
                "cannot accept connections: \(which) file descriptor limit is reached; accepting again each second. Raise LimitNOFILE (ulimit -n) or lower the connection limits",
                metadata: ["listener": "\(listener)", "error": "\(io)"])
        }
        context.fireErrorCaught(error)
    }
}
