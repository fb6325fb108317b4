import DNSWire
import Logging
import NIOCore

/// How the forwarder talks to upstreams (SPEC §9 "Forwarding").
public struct ForwarderConfiguration: Sendable {
    public var upstreams: [SocketAddress]
    /// One exchange with one upstream, UDP or TCP.
    public var perUpstreamTimeout: TimeAmount
    /// The whole question, failover included; after it the client gets SERVFAIL.
    public var overallTimeout: TimeAmount
    public var failuresBeforeBackoff: Int
    public var backoff: TimeAmount
    /// Questions being resolved upstream at once; more get SERVFAIL at once. A flood of unique
    /// names then costs a bounded number of sockets instead of every descriptor we have.
    public var maximumOutstanding: Int

    public init(
        upstreams: [SocketAddress], perUpstreamTimeout: TimeAmount = .seconds(2), overallTimeout: TimeAmount = .seconds(4),
        failuresBeforeBackoff: Int = 3, backoff: TimeAmount = .seconds(30), maximumOutstanding: Int = 512
    ) {
        self.maximumOutstanding = max(maximumOutstanding, 1)
        self.upstreams = upstreams
        self.perUpstreamTimeout = perUpstreamTimeout
        self.overallTimeout = overallTimeout
        self.failuresBeforeBackoff = failuresBeforeBackoff
        self.backoff = backoff
    }
}

/// Asks upstream resolvers, with failover, health, TCP after TC and a retry without EDNS after
/// FORMERR. Every answer, SERVFAIL included, comes back as a `CachedAnswer`.
public final class Forwarder: Sendable {
    public let configuration: ForwarderConfiguration
    let health: UpstreamHealth
    let logger: Logger
    let outstanding = InFlightCounter()

    public init(configuration: ForwarderConfiguration, logger: Logger) {
        self.configuration = configuration
        health = UpstreamHealth(
            count: configuration.upstreams.count, failuresBeforeBackoff: configuration.failuresBeforeBackoff,
            backoff: configuration.backoff)
        self.logger = logger
    }

    public func resolve(_ question: OutgoingQuestion, on loop: any EventLoop) -> EventLoopFuture<CachedAnswer> {
        guard outstanding.current < configuration.maximumOutstanding else {
            return loop.makeSucceededFuture(.failure(question, receivedAt: NIODeadline.now().uptimeNanoseconds))
        }
        outstanding.increment()
        return loop.makeFutureWithTask {
            defer { self.outstanding.decrement() }
            return await self.resolve(question, on: loop)
        }
    }

    func resolve(_ question: OutgoingQuestion, on loop: any EventLoop) async -> CachedAnswer {
        let start = NIODeadline.now()
        let deadline = start + configuration.overallTimeout
        guard let name = try? DNSName(wireBytes: question.name) else {
            return .failure(question, rcode: .formatError, receivedAt: start.uptimeNanoseconds)
        }
        let dnsQuestion = DNSQuestion(name: name, type: question.type, class: question.class)
        var fallback: DNSMessage?
        for index in health.order(now: start.uptimeNanoseconds) {
            let remaining = deadline - NIODeadline.now()
            guard remaining > .milliseconds(1) else { break }
            let upstream = configuration.upstreams[index]
            let timeout = min(configuration.perUpstreamTimeout, remaining)
            do {
                let reply = try await exchange(dnsQuestion, question: question, upstream: upstream, timeout: timeout, deadline: deadline, on: loop)
                // The upstream is alive either way; only silence and network errors count against it.
                health.succeeded(index)
                // SERVFAIL and REFUSED say this upstream cannot help with this name; another may.
                if reply.rcode == .serverFailure || reply.rcode == .refused {
                    fallback = reply
                    continue
                }
                return .normalize(reply, question: question, receivedAt: NIODeadline.now().uptimeNanoseconds)
            } catch {
                noteFailure(index, upstream: upstream, reason: "\(error)")
            }
        }
        let now = NIODeadline.now().uptimeNanoseconds
        if let fallback { return .normalize(fallback, question: question, receivedAt: now) }
        return .failure(question, receivedAt: now)
    }

    /// One upstream: UDP with EDNS; without EDNS after FORMERR or NOTIMP (RFC 6891 §7); over TCP
    /// after TC (RFC 7766 §6.2.1). A fresh random ID for every message sent (RFC 5452 §9.2).
    private func exchange(
        _ dnsQuestion: DNSQuestion, question: OutgoingQuestion, upstream: SocketAddress, timeout: TimeAmount,
        deadline: NIODeadline, on loop: any EventLoop
    ) async throws -> DNSMessage {
        var withEDNS = true
        var reply = try await send(dnsQuestion, question: question, upstream: upstream, edns: true, tcp: false, timeout: timeout, on: loop)
        if withEDNS, reply.rcode == .formatError || reply.rcode == .notImplemented, reply.edns == nil {
            withEDNS = false
            let left = min(timeout, deadline - NIODeadline.now())
            reply = try await send(dnsQuestion, question: question, upstream: upstream, edns: false, tcp: false, timeout: left, on: loop)
        }
        if reply.header.truncated {
            let left = min(timeout, deadline - NIODeadline.now())
            reply = try await send(dnsQuestion, question: question, upstream: upstream, edns: withEDNS, tcp: true, timeout: left, on: loop)
        }
        return reply
    }

    private func send(
        _ dnsQuestion: DNSQuestion, question: OutgoingQuestion, upstream: SocketAddress, edns: Bool, tcp: Bool,
        timeout: TimeAmount, on loop: any EventLoop
    ) async throws -> DNSMessage {
        let id = UInt16.random(in: .min ... .max)
        let header = DNSHeader(id: id, recursionDesired: true, checkingDisabled: question.checkingDisabled)
        // RFC 3225 §3: the DO bit is passed on as the client set it, so DNSSEC records flow through.
        let message = DNSMessage(
            header: header, questions: [dnsQuestion],
            edns: edns ? EDNS(udpPayloadSize: UInt16(DNSServerLimits.ednsPayloadSize), dnssecOK: question.dnssecOK) : nil)
        let bytes: [UInt8]
        do {
            bytes = try message.serialize()
        } catch {
            throw UpstreamError.cannotEncode(reason: error.description)
        }
        let matcher = ReplyMatcher(upstream: upstream, id: id, question: dnsQuestion)
        return tcp
            ? try await UpstreamExchange.tcp(bytes, matcher: matcher, timeout: timeout, on: loop)
            : try await UpstreamExchange.udp(bytes, matcher: matcher, timeout: timeout, on: loop)
    }

    /// Each upstream's health, in configuration order (the metrics' `scrolloff_upstream_*` series).
    public func upstreamStatuses() -> [UpstreamStatus] {
        let states = health.states(now: NIODeadline.now().uptimeNanoseconds)
        return zip(configuration.upstreams, states).map { address, state in
            UpstreamStatus(
                address: HostPort(host: address.ipAddress ?? "\(address)", port: address.port ?? 0).description, up: state.up,
                consecutiveFailures: state.consecutiveFailures, totalFailures: state.totalFailures)
        }
    }

    /// Logs the upstream and the reason only, never the question: allowed names are not logged
    /// at any level (SPEC §9), and `UpstreamError` descriptions carry no name either.
    private func noteFailure(_ index: Int, upstream: SocketAddress, reason: String) {
        if health.failed(index, now: NIODeadline.now().uptimeNanoseconds) {
            logger.warning(
                "upstream backed off after repeated failures",
                metadata: ["upstream": "\(upstream)", "reason": "\(reason)", "backoff.s": "\(configuration.backoff.nanoseconds / 1_000_000_000)"])
        } else {
            logger.debug("upstream exchange failed", metadata: ["upstream": "\(upstream)", "reason": "\(reason)"])
        }
    }
}

/// One upstream as the metrics see it: down while backed off after repeated failures.
public struct UpstreamStatus: Sendable, Equatable {
    public var address: String
    public var up: Bool
    public var consecutiveFailures: Int
    public var totalFailures: UInt64

    public init(address: String, up: Bool, consecutiveFailures: Int, totalFailures: UInt64) {
        self.address = address
        self.up = up
        self.consecutiveFailures = consecutiveFailures
        self.totalFailures = totalFailures
    }
}
