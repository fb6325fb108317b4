import DNSWire
import NIOCore

/// One pooled upstream UDP socket: sends questions and hands each reply to the question it
/// answers, by ID first and then by `ReplyMatcher` (source, ID, question, 0x20 case).
///
/// Any datagram that answers none of its questions is unwanted (unbound's
/// `unwanted-reply-threshold`): past the threshold someone is very likely trying IDs against this
/// port, so every question waiting on it is given up, to be asked again over TCP, which an off-path
/// spoofer cannot answer, and the port is dropped for a new one. A reply that arrives after its
/// question gave up (a slow upstream) is not counted: on a shared port it is no sign of an attack.
final class PooledSocketHandler: ChannelInboundHandler {
    typealias InboundIn = AddressedEnvelope<ByteBuffer>
    typealias OutboundOut = AddressedEnvelope<ByteBuffer>

    private struct Waiter {
        let serial: UInt64
        let question: PooledQuestion
        let promise: EventLoopPromise<DNSMessage>
        let timer: Scheduled<Void>
    }

    /// Questions sent since the socket was opened (or since a successor could not be bound).
    var sent = 0
    /// Called once when the socket stops taking questions: spoofed, or closed.
    var onRetire: (() -> Void)?
    private var channel: (any Channel)?
    private var waiting: [UInt16: [Waiter]] = [:]
    private var serial: UInt64 = 0
    private var unwanted = 0
    /// The settings of the latest question: every question on the port sees the same datagrams.
    private var threshold = 0
    private var counter: UnwantedReplyCounter?
    private var retired = false
    /// IDs of the last questions that timed out, whose late replies are not counted as unwanted.
    private var late = CircularBuffer<UInt16>(initialCapacity: 64)

    func handlerAdded(context: ChannelHandlerContext) { channel = context.channel }

    func ask(_ question: PooledQuestion, promise: EventLoopPromise<DNSMessage>) {
        guard let channel, !retired else {
            promise.fail(UpstreamError.timedOut(upstream: question.matcher.upstream, transport: .udp))
            return
        }
        sent += 1
        serial += 1
        threshold = question.unwantedThreshold
        counter = question.counter
        let id = question.matcher.id
        let serial = serial
        let bound = NIOLoopBound(self, eventLoop: channel.eventLoop)
        let timer = channel.eventLoop.scheduleTask(in: question.timeout) {
            bound.value.finish(id: id, serial: serial, .failure(UpstreamError.timedOut(upstream: question.matcher.upstream, transport: .udp)), late: true)
        }
        waiting[id, default: []].append(Waiter(serial: serial, question: question, promise: promise, timer: timer))
        var buffer = channel.allocator.buffer(capacity: question.query.count)
        buffer.writeBytes(question.query)
        channel.writeAndFlush(AddressedEnvelope(remoteAddress: question.matcher.upstream, data: buffer), promise: nil)
    }

    /// Sets SO_MARK on the open socket (0 clears it), on its loop.
    func setMark(_ mark: UInt32?) throws {
        try channel?.syncOptions?.setOption(UpstreamExchange.markOption, value: Int(mark ?? 0))
    }

    /// SO_MARK as the kernel has it (for tests).
    func currentMark() throws -> UInt32 {
        guard let options = channel?.syncOptions else { return 0 }
        return UInt32(truncatingIfNeeded: try options.getOption(UpstreamExchange.markOption))
    }

    /// Takes no more questions; closes once the last one waiting is done.
    func retire() {
        guard !retired else { return }
        retired = true
        onRetire?()
        onRetire = nil
        if waiting.isEmpty { channel?.close(promise: nil) }
    }

    func channelRead(context: ChannelHandlerContext, data: NIOAny) {
        let envelope = unwrapInboundIn(data)
        let id = envelope.data.getInteger(at: envelope.data.readerIndex, as: UInt16.self)
        for waiter in id.flatMap({ waiting[$0] }) ?? [] {
            switch waiter.question.matcher.check(envelope.data, from: envelope.remoteAddress) {
            case .accepted(let message):
                finish(id: waiter.question.matcher.id, serial: waiter.serial, .success(message))
                return
            case .caseMismatch:
                waiter.question.counter?.add(1)
                finish(id: waiter.question.matcher.id, serial: waiter.serial, .failure(UpstreamError.caseMismatch(upstream: waiter.question.matcher.upstream)))
                return
            case .unwanted:
                continue
            }
        }
        if let id, late.contains(id) { return }
        unwanted += 1
        counter?.add(1)
        if threshold > 0, unwanted >= threshold, !retired { giveUp() }
    }

    func channelInactive(context: ChannelHandlerContext) {
        retired = true
        onRetire?()
        onRetire = nil
        for waiter in waiting.values.joined() {
            waiter.timer.cancel()
            waiter.promise.fail(UpstreamError.timedOut(upstream: waiter.question.matcher.upstream, transport: .udp))
        }
        waiting.removeAll()
        context.fireChannelInactive()
    }

    func errorCaught(context: ChannelHandlerContext, error: any Error) {
        // ICMP errors (port unreachable) surface here on some systems; each question's timeout decides.
    }

    /// Too many unwanted datagrams: every question waiting here is asked again over TCP.
    private func giveUp() {
        let count = unwanted
        retire()
        for waiter in Array(waiting.values.joined()) {
            finish(id: waiter.question.matcher.id, serial: waiter.serial,
                   .failure(UpstreamError.unwantedReplies(upstream: waiter.question.matcher.upstream, count: count)))
        }
    }

    private func finish(id: UInt16, serial: UInt64, _ result: Result<DNSMessage, any Error>, late timedOut: Bool = false) {
        guard var list = waiting[id], let index = list.firstIndex(where: { $0.serial == serial }) else { return }
        let waiter = list.remove(at: index)
        waiting[id] = list.isEmpty ? nil : list
        waiter.timer.cancel()
        if timedOut {
            if late.count >= 64 { late.removeFirst() }
            late.append(id)
        }
        waiter.promise.completeWith(result)
        if retired, waiting.isEmpty { channel?.close(promise: nil) }
    }
}
