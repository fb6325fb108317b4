import Foundation
import Synchronization
#if canImport(Glibc)
import Glibc
#endif

/// Calls `fire` once a delay has passed, measured by the kernel as a relative timeout (poll(2) on
/// a pipe), not as a deadline on the process's own clocks.
///
/// Hosts mode must rewrite the file at a window edge even when the clocks it reads are not the
/// kernel's: a deadline that Dispatch computes from a clock that was set or faked (libfaketime, as
/// the end-to-end tests run the helper) may lie hours away or in the past, and `Task.sleep` then
/// never wakes at the edge. The DNS side needs no timer (its snapshot decides per query); the
/// hosts file does, so its wake is a plain "in N milliseconds" that no clock can move.
final class RelativeWakeTimer: @unchecked Sendable {
    // @unchecked: the pipe's ends are set once in init; the rest is behind a Mutex or an Atomic.
    private let readEnd: Int32
    private let writeEnd: Int32
    private let armed = Mutex<Int64?>(nil)
    private let stopped = Atomic<Bool>(false)
    private let fire: @Sendable () -> Void

    /// Nil when no pipe could be made.
    init?(fire: @escaping @Sendable () -> Void) {
        var ends: [Int32] = [-1, -1]
        guard pipe(&ends) == 0 else { return nil }
        for end in ends {
            _ = fcntl(end, F_SETFD, FD_CLOEXEC)
            _ = fcntl(end, F_SETFL, O_NONBLOCK)
        }
        readEnd = ends[0]
        writeEnd = ends[1]
        self.fire = fire
        Thread.detachNewThread { [self] in loop() }
    }

    /// Fires `milliseconds` from now, replacing any earlier arming.
    func arm(milliseconds: Int64) {
        armed.withLock { $0 = max(1, milliseconds) }
        poke()
    }

    /// Ends the timer's thread; it fires no more.
    func stop() {
        stopped.store(true, ordering: .relaxed)
        poke()
    }

    private func poke() {
        var one: UInt8 = 1
        _ = write(writeEnd, &one, 1)
    }

    private func loop() {
        var delay: Int64?
        while !stopped.load(ordering: .relaxed) {
            var p = pollfd(fd: readEnd, events: Int16(POLLIN), revents: 0)
            let ready = poll(&p, 1, delay.map { Int32(clamping: $0) } ?? -1)
            if ready > 0 {
                var drain = [UInt8](repeating: 0, count: 64)
                while read(readEnd, &drain, drain.count) > 0 {}
                delay = armed.withLock { d in defer { d = nil }; return d }
            } else if ready == 0 {
                delay = nil
                fire()
            }
            // ready < 0 is EINTR: poll again with the same delay (a signal only makes it a little later).
        }
        close(readEnd)
        close(writeEnd)
    }
}
