import NIOConcurrencyHelpers
import NIOCore

/// Takes turns: a connection that waits for its client's turn is given it by `resume`.
protocol TCPTurnTaker: AnyObject {
    func resume()
}

/// Which DNS-over-TCP connections of one client are read and answered at once on one event loop
/// (SPEC §9.6): one, the others of that client waiting their turn in order. A client is an IPv4
/// address or an IPv6 /64 (`ClientAddress.deviceKey`).
///
/// A loop reads each readable connection once per turn (128 bytes, about four queries) and
/// answers what it read, so a turn's length grew with the number of connections: slow readers
/// from 15 addresses held all 256 slots, each connection pipelining and answered a little every
/// turn (a connection needs thousands of answers before its client's buffers fill and it stalls,
/// at a few a turn it never did), so every turn answered about 1,000 queries in ~24 ms and another
/// client's query waited one or more such turns (p99 150–230 ms with the server on a CPU of its
/// own). Refusing all but two connections per address brought that under 50 ms, at the cost of a
/// household's devices behind one address (NAT) sharing two connections. Taking turns bounds a
/// loop's turn by the number of clients instead, and refuses no connection: a client that
/// pipelines on 17 connections is read on one at a time, `quantum` answers each, while a client
/// that asks and waits gives its turn back as soon as what it sent is answered.
///
/// Used only on its event loop, without a lock.
final class TCPTurns: @unchecked Sendable {
    /// Answers a connection gives before another of its client that waits gets the turn:
    /// one connection's whole in-flight window (`tcp_queries_per_connection`'s default).
    static let quantum = 64
    /// A connection that has the turn and is not read for this long gives it back (a client that
    /// filled its last read exactly and then sent nothing more).
    static let quietAfter = TimeAmount.milliseconds(20)

    let eventLoop: any EventLoop
    private var clients: [ClientAddress: Client] = [:]

    private struct Client {
        var holder: ObjectIdentifier
        var waiting = CircularBuffer<any TCPTurnTaker>(initialCapacity: 2)
    }

    init(eventLoop: any EventLoop) {
        self.eventLoop = eventLoop
    }

    /// True when `taker` has the turn of `client` now; otherwise it waits and `resume` is called
    /// on it (from a task of the loop) once it has.
    func take(_ client: ClientAddress, for taker: any TCPTurnTaker) -> Bool {
        eventLoop.assertInEventLoop()
        guard clients[client] != nil else {
            clients[client] = Client(holder: ObjectIdentifier(taker))
            return true
        }
        clients[client]!.waiting.append(taker)
        return false
    }

    /// Gives the turn back; the first connection of the client that waits gets it.
    func giveBack(_ client: ClientAddress, from taker: any TCPTurnTaker) {
        eventLoop.assertInEventLoop()
        guard clients[client]?.holder == ObjectIdentifier(taker) else { return }
        handOn(client)
    }

    /// Gives the turn to the first connection that waits, if any, and waits behind the others;
    /// false when none waits (the taker keeps the turn).
    func yield(_ client: ClientAddress, from taker: any TCPTurnTaker) -> Bool {
        eventLoop.assertInEventLoop()
        guard let state = clients[client], state.holder == ObjectIdentifier(taker), !state.waiting.isEmpty else { return false }
        clients[client]!.waiting.append(taker)
        handOn(client)
        return true
    }

    /// A connection that closes: out of the line, and its turn to the next.
    func leave(_ client: ClientAddress, _ taker: any TCPTurnTaker) {
        eventLoop.assertInEventLoop()
        guard clients[client] != nil else { return }
        let id = ObjectIdentifier(taker)
        if clients[client]!.holder == id {
            handOn(client)
        } else if let index = clients[client]!.waiting.firstIndex(where: { ObjectIdentifier($0) == id }) {
            clients[client]!.waiting.remove(at: index)
        }
    }

    /// Clients with a connection that has the turn or waits for it; for tests.
    var clientCount: Int { clients.count }

    private func handOn(_ client: ClientAddress) {
        guard let next = clients[client]!.waiting.popFirst() else {
            clients[client] = nil
            return
        }
        clients[client]!.holder = ObjectIdentifier(next)
        // From a task: the connection that handed the turn on may be in the middle of its own drain.
        let bound = NIOLoopBound(next, eventLoop: eventLoop)
        eventLoop.execute { bound.value.resume() }
    }
}

/// The turns of each event loop of a group, looked up once per connection.
final class TCPTurnTable: Sendable {
    private let turns = NIOLockedValueBox<[ObjectIdentifier: TCPTurns]>([:])

    func turns(for eventLoop: any EventLoop) -> TCPTurns {
        turns.withLockedValue { table in
            if let existing = table[ObjectIdentifier(eventLoop)] { return existing }
            let made = TCPTurns(eventLoop: eventLoop)
            table[ObjectIdentifier(eventLoop)] = made
            return made
        }
    }
}
