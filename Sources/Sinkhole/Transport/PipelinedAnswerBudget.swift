import NIOCore

/// Answers to pipelined DNS-over-TCP queries that one event loop gives per second, over all of
/// its connections (SPEC §9.6). A query is pipelined when it arrives behind another of its
/// connection's, still waiting or being answered; the first query of a read of a connection that
/// has nothing in flight is never counted, so a client asking one question at a time is never
/// held back, whatever the others do.
///
/// Slow readers pipeline thousands of queries per connection and read no reply. Each connection's
/// replies fill the client's receive window and the kernel's send buffer before the connection
/// is seen stalled: ~4,000 replies each, for every connection it (re)opens, on every connection
/// the caps admit. Answering them as fast as the loops could kept every loop turn full for the
/// whole flood: every flooding connection was read in each turn, and another client's query
/// waited a turn or three behind them (p99 240–480 ms in a release build, docs/benchmarks.md).
/// Per address or per connection bounds do not bound that: more addresses and connections
/// multiply them. This bounds the work itself: past the budget a connection with pipelined
/// queries waiting is not read (so its socket leaves the loop's ready list) until the budget has
/// a token for it again, in the order they ran out. unbound bounds the same work by serving
/// `incoming-num-tcp` connections (10 per thread) and leaving the rest in the accept queue.
///
/// Confined to its loop: every call is made there (the handlers of its connections and its own
/// timer), which is why it may be shared as `Sendable` without a lock.
final class PipelinedAnswerBudget: @unchecked Sendable {
    /// Tokens per second; 0 gives every pipelined query at once (no bound).
    let perSecond: Int
    /// Tokens saved up at most: 20 ms worth, so an idle second does not become one long turn.
    let burst: Int
    let loop: any EventLoop
    private var tokens: Int
    private var refilledAt: NIODeadline
    private let nanosecondsPerToken: Int64
    /// Connections that ran out, oldest first, each with the way to serve it again.
    private var waiting = CircularBuffer<() -> Void>()
    private var timer: Scheduled<Void>?

    init(perSecond: Int, loop: any EventLoop) {
        self.perSecond = max(perSecond, 0)
        self.loop = loop
        burst = max(self.perSecond / 50, 8)
        tokens = burst
        refilledAt = loop.now
        nanosecondsPerToken = self.perSecond > 0 ? max(1_000_000_000 / Int64(self.perSecond), 1) : 1
    }

    /// Takes a token for one pipelined query; false when there is none now.
    func take() -> Bool {
        guard perSecond > 0 else { return true }
        refill()
        guard tokens > 0 else { return false }
        tokens -= 1
        return true
    }

    /// Calls `resume` once a token may be had, after the connections that ran out before it.
    func wait(_ resume: @escaping () -> Void) {
        waiting.append(resume)
        armTimer()
    }

    private func refill() {
        let now = loop.now
        let earned = (now - refilledAt).nanoseconds / nanosecondsPerToken
        guard earned > 0 else { return }
        if Int64(tokens) + earned >= Int64(burst) {
            tokens = burst
            refilledAt = now
        } else {
            tokens += Int(earned)
            refilledAt = refilledAt + .nanoseconds(earned * nanosecondsPerToken)
        }
    }

    private func armTimer() {
        guard timer == nil, !waiting.isEmpty else { return }
        // At least 2 ms apart: each firing serves a batch, not one connection per token.
        timer = loop.scheduleTask(in: .nanoseconds(max(nanosecondsPerToken, 2_000_000))) { [self] in
            timer = nil
            refill()
            // Those waiting now, each once: one that runs out again waits behind the rest.
            var turns = waiting.count
            while turns > 0, tokens > 0, !waiting.isEmpty {
                turns -= 1
                waiting.removeFirst()()
            }
            armTimer()
        }
    }
}
