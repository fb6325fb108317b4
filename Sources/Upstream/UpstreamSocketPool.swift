import DNSWire
import NIOCore
import NIOPosix
import NIOConcurrencyHelpers

/// The UDP sockets questions are sent upstream from: a few per event loop and address family,
/// shared by the questions of that loop, instead of one new socket per question.
///
/// A socket per question made every forwarded query need a free descriptor: at the descriptor
/// limit (a flood of TCP connections, a low `LimitNOFILE`) every forward failed with EMFILE and
/// the client got SERVFAIL (SPEC §9.6). The pool opens its sockets before the listeners (see
/// `Forwarder.openSockets`) and only ever replaces one once its successor is bound, so it keeps
/// working with no descriptor left. The spoofing margin stays (RFC 5452 §9.2): each question goes
/// from a socket picked at random, each socket's port is picked at random by the kernel and changes
/// after `questionsPerPort` questions, and replies are still matched on source, ID, question and
/// 0x20 letter case per question.
package final class UpstreamSocketPool: Sendable {
    /// Sockets per event loop and family.
    let socketsPerLoop: Int
    /// Questions sent from one port before it is replaced by a new random one.
    let questionsPerPort: Int
    private let state: NIOLockedValueBox<State>

    private struct State {
        var loops: [Key: NIOLoopBoundBox<LoopSockets>] = [:]
        /// SO_MARK of every socket (the firewall's, SPEC §9b), nil = none.
        var mark: UInt32?
    }

    private struct Key: Hashable {
        let loop: ObjectIdentifier
        let inet6: Bool
    }

    package init(socketsPerLoop: Int = 16, questionsPerPort: Int = 256, mark: UInt32? = nil) {
        self.socketsPerLoop = max(socketsPerLoop, 1)
        self.questionsPerPort = max(questionsPerPort, 1)
        state = NIOLockedValueBox(State(mark: mark))
    }

    /// The mark sockets carry from now on: those open now are changed in place (no descriptor
    /// needed), those bound later get it at bind, the replacements of rotated ports included.
    package func setMark(_ mark: UInt32?) {
        let all: [NIOLoopBoundBox<LoopSockets>]? = state.withLockedValue { state in
            guard state.mark != mark else { return nil }
            state.mark = mark
            return Array(state.loops.values)
        }
        for sockets in all ?? [] {
            sockets.eventLoop.execute { sockets.value.setMark(mark) }
        }
    }

    /// The mark new sockets get (for tests).
    var mark: UInt32? { state.withLockedValue { $0.mark } }

    /// Opens every socket of `loop` for `family` now, so that forwarding does not depend on a free
    /// descriptor later. Failures are left for the first question to retry.
    package func open(on loop: any EventLoop, inet6: Bool) async {
        let sockets = sockets(for: loop, inet6: inet6)
        try? await loop.flatSubmit { sockets.value.openAll() }.get()
    }

    /// Sends `query` and waits at most `timeout` for the reply `matcher` accepts.
    package func exchange(
        _ query: [UInt8], matcher: ReplyMatcher, timeout: TimeAmount, unwantedThreshold: Int, counter: UnwantedReplyCounter?,
        on loop: any EventLoop
    ) async throws -> DNSMessage {
        let sockets = sockets(for: loop, inet6: matcher.upstream.protocol == .inet6)
        let question = PooledQuestion(query: query, matcher: matcher, timeout: timeout, unwantedThreshold: unwantedThreshold, counter: counter)
        return try await loop.flatSubmit { sockets.value.ask(question) }.get()
    }

    /// Sockets open now over every loop and family (for tests and the descriptor budget).
    var openSockets: Int {
        get async {
            let all = state.withLockedValue { Array($0.loops.values) }
            var total = 0
            for sockets in all { total += (try? await sockets.eventLoop.submit { sockets.value.openCount }.get()) ?? 0 }
            return total
        }
    }

    /// SO_MARK of every open socket as the kernel has it, over every loop and family (for tests).
    var openMarks: [UInt32] {
        get async throws {
            let all = state.withLockedValue { Array($0.loops.values) }
            var marks: [UInt32] = []
            for sockets in all { marks += try await sockets.eventLoop.submit { try sockets.value.openMarks() }.get() }
            return marks
        }
    }

    private func sockets(for loop: any EventLoop, inet6: Bool) -> NIOLoopBoundBox<LoopSockets> {
        let key = Key(loop: ObjectIdentifier(loop), inet6: inet6)
        let (socketsPerLoop, questionsPerPort) = (socketsPerLoop, questionsPerPort)
        return state.withLockedValue { state in
            if let found = state.loops[key] { return found }
            // Made under the lock with the mark of this moment: a later `setMark` reaches it.
            let made = NIOLoopBoundBox.makeBoxSendingValue(
                LoopSockets(loop: loop, inet6: inet6, count: socketsPerLoop, questionsPerPort: questionsPerPort, mark: state.mark),
                as: LoopSockets.self, eventLoop: loop)
            state.loops[key] = made
            return made
        }
    }
}

/// One question for a pooled socket, with how to judge what arrives for it.
struct PooledQuestion: Sendable {
    let query: [UInt8]
    let matcher: ReplyMatcher
    let timeout: TimeAmount
    let unwantedThreshold: Int
    let counter: UnwantedReplyCounter?
}
