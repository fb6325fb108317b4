import Synchronization
#if canImport(Glibc)
import Glibc
#elseif canImport(Musl)
import Musl
#endif

/// Frees what the engine replaces (an enforcement, a matcher, a list's parsed rules) on a thread
/// of its own under `SCHED_IDLE`, never on an event loop or on the engine.
///
/// Why (SPEC §9: a list refresh never stalls answers): a query holds the enforcement in force
/// for the whole query, so when a publish lands mid-query the event loop dropped the last
/// reference and freed a 30 MB matcher itself, and otherwise the engine did, in `publish`. Large
/// memory now goes back to the kernel in steps (`PageRelease`), but steps on the loop are still
/// the loop's time, and on the engine they hold every engine call.
///
/// `retire` takes a reference from the caller. The releaser thread checks every `pollInterval`
/// whether it holds the last one (`isKnownUniquelyReferenced`) and only then drops it, so the
/// deinit, and the step-wise freeing under it, runs there. An object still held after `patience`
/// (a consumer that keeps it) is let go by the releaser all the same: whoever holds it frees it
/// later, as before, and nothing is held forever. An object already waiting is not taken twice.
/// The queue is bounded: past `capacity`, or if no thread can be made, the caller drops its
/// reference in place, as before. The thread exits when nothing waits and is never joined, so
/// a shutdown does not wait for it.
package final class Retirement: Sendable {
    /// The one the engine and the DNS policy hand their replaced objects to.
    package static let shared = Retirement()

    let pollInterval: Duration
    let patience: Duration
    let capacity: Int

    private struct Waiting: @unchecked Sendable {
        // @unchecked: only touched under the lock; dropped by the releaser once unique.
        var object: AnyObject
        let deadline: ContinuousClock.Instant
    }

    private struct State {
        var waiting: [Waiting] = []
        var running = false
    }

    private let state = Mutex(State())

    init(pollInterval: Duration = .milliseconds(10), patience: Duration = .seconds(60), capacity: Int = 256) {
        self.pollInterval = pollInterval
        self.patience = patience
        self.capacity = capacity
    }

    /// Hands `object` over to be freed on the releaser thread once every other reference is gone.
    package func retire(_ object: AnyObject) {
        let start = state.withLock { state -> Bool in
            // Already waiting: this reference is not the last, so the caller may drop it.
            if state.waiting.contains(where: { $0.object === object }) { return false }
            guard state.waiting.count < capacity else { return false }
            state.waiting.append(Waiting(object: object, deadline: .now + patience))
            if state.running { return false }
            state.running = true
            return true
        }
        if start, !startThread() {
            // No thread: everything waiting is dropped here, as it was before the releaser.
            var dropped: [Waiting] = []
            state.withLock { state in
                state.running = false
                swap(&dropped, &state.waiting)
            }
            dropped.removeAll()
        }
    }

    /// Whether `object` waits to be freed (for tests).
    func isWaiting(_ object: AnyObject) -> Bool {
        state.withLock { $0.waiting.contains { $0.object === object } }
    }

    /// Whether the calling thread is the releaser (for tests: a deinit can tell where it ran).
    static var isReleaserThread: Bool { pthread_getspecific(releaserKey) != nil }

    private static let releaserKey: pthread_key_t = {
        var key = pthread_key_t()
        pthread_key_create(&key, nil)
        return key
    }()

    private func startThread() -> Bool {
        LowPriorityThread.start(name: "scrolloff-free", idle: true, detached: true) { [self] in
            pthread_setspecific(Retirement.releaserKey, UnsafeRawPointer(bitPattern: 1))
            release()
        } != nil
    }

    /// The releaser thread: drops whatever it holds alone, every `pollInterval`, until nothing waits.
    private func release() {
        let interval = pollInterval.components
        let micros = interval.seconds * 1_000_000 + interval.attoseconds / 1_000_000_000_000
        while true {
            usleep(UInt32(clamping: max(micros, 1)))
            let now = ContinuousClock.now
            // Taken out of the queue under the lock, each the last reference (or past its
            // patience), and dropped after the lock is let go: a deinit may take seconds.
            let done = state.withLock { state -> [Waiting]? in
                var done: [Waiting] = []
                var index = 0
                while index < state.waiting.count {
                    if isKnownUniquelyReferenced(&state.waiting[index].object) || state.waiting[index].deadline <= now {
                        done.append(state.waiting.remove(at: index))
                    } else {
                        index += 1
                    }
                }
                if state.waiting.isEmpty && done.isEmpty {
                    state.running = false
                    return nil
                }
                return done
            }
            // Dropped here, on this thread: each deinit, and the freeing in steps under it.
            guard var done else { return }
            done.removeAll()
        }
    }
}
