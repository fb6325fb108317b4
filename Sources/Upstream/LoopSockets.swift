import DNSWire
import NIOCore
import NIOPosix

/// The pooled upstream sockets of one event loop and address family. Used on that loop only.
final class LoopSockets {
    private enum Slot {
        case empty
        /// Being bound; these wait for it.
        case opening([(Result<PooledSocketHandler, any Error>) -> Void])
        case open(PooledSocketHandler)
    }

    let loop: any EventLoop
    let inet6: Bool
    let questionsPerPort: Int
    /// SO_MARK of the sockets (the firewall's), nil = none.
    private(set) var mark: UInt32?
    private var slots: [Slot]
    /// Slots whose socket has served its questions and whose successor is being bound.
    private var replacing: Set<Int> = []

    init(loop: any EventLoop, inet6: Bool, count: Int, questionsPerPort: Int, mark: UInt32? = nil) {
        self.loop = loop
        self.mark = mark
        self.inet6 = inet6
        self.questionsPerPort = questionsPerPort
        slots = Array(repeating: .empty, count: count)
    }

    var openCount: Int {
        slots.reduce(0) { count, slot in
            if case .open = slot { return count + 1 }
            return count
        }
    }

    /// Marks the open sockets in place. A socket the kernel refuses to mark is retired (its slot
    /// binds a new one with the mark at the next question): sent unmarked while the firewall is
    /// on, its questions would be redirected back to this helper.
    func setMark(_ mark: UInt32?) {
        self.mark = mark
        for slot in slots {
            guard case .open(let socket) = slot else { continue }
            do { try socket.setMark(mark) } catch { socket.retire() }
        }
    }

    /// The marks of the open sockets as the kernel has them (for tests).
    func openMarks() throws -> [UInt32] {
        try slots.compactMap { slot in
            guard case .open(let socket) = slot else { return nil }
            return try socket.currentMark()
        }
    }

    func openAll() -> EventLoopFuture<Void> {
        let promise = loop.makePromise(of: Void.self)
        var left = slots.count
        for index in slots.indices {
            withSocket(index) { _ in
                left -= 1
                if left == 0 { promise.succeed() }
            }
        }
        return promise.futureResult
    }

    /// Asks from a socket picked at random; from any open one if that one cannot be bound.
    func ask(_ question: PooledQuestion) -> EventLoopFuture<DNSMessage> {
        let promise = loop.makePromise(of: DNSMessage.self)
        withSocket(Int.random(in: 0..<slots.count)) { result in
            switch result {
            case .success(let socket):
                socket.ask(question, promise: promise)
            case .failure(let error):
                if let socket = self.anyOpen() { socket.ask(question, promise: promise) } else { promise.fail(error) }
            }
        }
        return promise.futureResult
    }

    private func anyOpen() -> PooledSocketHandler? {
        for slot in slots.shuffled() {
            if case .open(let socket) = slot { return socket }
        }
        return nil
    }

    private func withSocket(_ index: Int, then: @escaping (Result<PooledSocketHandler, any Error>) -> Void) {
        switch slots[index] {
        case .open(let socket):
            then(.success(socket))
            // After the question is on its way: a bind on the loop may complete at once, and the
            // old socket closes when it has nothing waiting.
            if socket.sent >= questionsPerPort { replace(index, socket) }
        case .opening(var waiting):
            waiting.append(then)
            slots[index] = .opening(waiting)
        case .empty:
            slots[index] = .opening([then])
            bind(index) { result in
                guard case .opening(let waiting) = self.slots[index] else { return }
                if case .success(let socket) = result { self.slots[index] = .open(socket) } else { self.slots[index] = .empty }
                for waiter in waiting { waiter(result) }
            }
        }
    }

    /// Binds a successor for a socket that has sent its share; the old one serves until then, and
    /// keeps serving if no descriptor is left for a new one.
    private func replace(_ index: Int, _ old: PooledSocketHandler) {
        guard !replacing.contains(index) else { return }
        replacing.insert(index)
        bind(index) { result in
            self.replacing.remove(index)
            switch result {
            case .success(let socket):
                if case .open(let current) = self.slots[index], current === old {
                    self.slots[index] = .open(socket)
                    old.retire()
                } else {
                    socket.retire()
                }
            case .failure:
                old.sent = 0
            }
        }
    }

    // Literals that always parse, so the force is never taken.
    private static let anyIPv4 = try! SocketAddress(ipAddress: "0.0.0.0", port: 0)
    private static let anyIPv6 = try! SocketAddress(ipAddress: "::", port: 0)

    private func bind(_ index: Int, then: @escaping (Result<PooledSocketHandler, any Error>) -> Void) {
        let handler = PooledSocketHandler()
        let bound = NIOLoopBound(handler, eventLoop: loop)
        // Whatever ends a socket (a spoofing verdict, its close) frees its slot for a new one.
        handler.onRetire = { [unowned self, unowned handler] in
            if case .open(let current) = self.slots[index], current === handler { self.slots[index] = .empty }
        }
        let mark = mark
        var bootstrap = DatagramBootstrap(group: loop)
        if let mark { bootstrap = bootstrap.channelOption(UpstreamExchange.markOption, value: Int(mark)) }
        bootstrap
            .channelInitializer { channel in
                channel.eventLoop.makeCompletedFuture { try channel.pipeline.syncOperations.addHandler(bound.value) }
            }
            // Port 0: the kernel picks a random ephemeral port (RFC 5452 §9.2). A literal address,
            // not a host name: NIO resolves a host through getaddrinfo, whose default hints
            // (AI_V4MAPPED | AI_ADDRCONFIG) make "0.0.0.0" the IPv6 `::ffff:0.0.0.0` on a machine
            // with IPv6 but no IPv4 beyond loopback, and an IPv4 upstream then got no answer.
            .bind(to: inet6 ? Self.anyIPv6 : Self.anyIPv4)
            .assumeIsolated()
            .whenComplete { result in
                // The mark changed while this socket was being bound: it takes the new one too.
                if case .success = result, self.mark != mark {
                    do { try handler.setMark(self.mark) } catch {
                        handler.retire()
                        then(.failure(error))
                        return
                    }
                }
                then(result.map { _ in handler })
            }
    }
}
