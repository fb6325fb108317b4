import DNSWire
import Logging
import NIOCore
import NIOConcurrencyHelpers
import Upstream

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
    /// Questions asked over TCP at once (after TC, or when a UDP exchange looked spoofed). Each
    /// holds a descriptor of its own, unlike the pooled UDP sockets, so the helper fits this to its
    /// descriptor limit; past it the question gets SERVFAIL rather than running the process out.
    public var maximumTCPExchanges: Int
    /// Datagrams that are not the reply, on one query's port, after which that port is given up and
    /// the question asked over TCP (unbound's `unwanted-reply-threshold`, counted per port here
    /// since every question has a port of its own). 0 = never.
    public var unwantedReplyThreshold: Int
    /// SO_MARK on every upstream socket, so the firewall's redirect of DNS (SPEC §9b) lets the
    /// helper's own questions out instead of sending them back to itself; nil = no mark. Setting
    /// it needs CAP_NET_ADMIN, which applying the firewall needs anyway.
    public var socketMark: UInt32?

    public init(
        upstreams: [SocketAddress], perUpstreamTimeout: TimeAmount = .seconds(2), overallTimeout: TimeAmount = .seconds(4),
        failuresBeforeBackoff: Int = 3, backoff: TimeAmount = .seconds(30), maximumOutstanding: Int = 512,
        maximumTCPExchanges: Int = 512, unwantedReplyThreshold: Int = 10, socketMark: UInt32? = nil
    ) {
        self.socketMark = socketMark
        self.maximumOutstanding = max(maximumOutstanding, 1)
        self.maximumTCPExchanges = max(maximumTCPExchanges, 1)
        self.unwantedReplyThreshold = max(unwantedReplyThreshold, 0)
        self.upstreams = upstreams
        self.perUpstreamTimeout = perUpstreamTimeout
        self.overallTimeout = overallTimeout
        self.failuresBeforeBackoff = failuresBeforeBackoff
        self.backoff = backoff
    }
}

/// Asks upstream resolvers, with failover, health, TCP after TC and a retry without EDNS after
/// FORMERR. Every answer, SERVFAIL included, comes back as a `CachedAnswer`.
///
/// The upstream set can be replaced while queries are in flight (a configuration reload): each
/// question reads the set once when it starts and finishes with it, so nothing in flight is
/// dropped or sent to a half-changed list; the next question uses the new set.
public final class Forwarder: Sendable {
    /// Upstreams, timeouts and their health records, always replaced together.
    final class UpstreamSet: Sendable {
        let configuration: ForwarderConfiguration
        let health: UpstreamHealth

        init(_ configuration: ForwarderConfiguration, health: UpstreamHealth? = nil) {
            self.configuration = configuration
            self.health = health ?? UpstreamHealth(
                count: configuration.upstreams.count, failuresBeforeBackoff: configuration.failuresBeforeBackoff,
                backoff: configuration.backoff)
        }
    }

    private let current: NIOLockedValueBox<UpstreamSet>
    let logger: Logger
    let outstanding = InFlightCounter()
    /// Exchanges over TCP now, bounded by `maximumTCPExchanges`.
    let tcpExchanges = InFlightCounter()
    /// Says once a minute that the TCP bound turned questions away.
    let busyLog: ThrottledLog
    /// Datagrams on query ports that were not the reply (spoofing attempts, late duplicates).
    let unwantedReplies = UnwantedReplyCounter()
    /// UDP exchanges abandoned as possibly spoofed and asked again over TCP.
    let spoofingRetries = UnwantedReplyCounter()
    /// The sockets UDP questions go from, shared by the questions of each event loop.
    let sockets: UpstreamSocketPool

    public init(configuration: ForwarderConfiguration, logger: Logger) {
        current = NIOLockedValueBox(UpstreamSet(configuration))
        // The firewall's mark is known before any pooled socket opens (`openSockets` comes after).
        sockets = UpstreamSocketPool(mark: configuration.socketMark)
        self.logger = logger
        busyLog = ThrottledLog(logger: logger)
    }

    /// Opens the upstream UDP sockets of every loop of `group` now, before the listeners, so that
    /// forwarding never waits for a free descriptor (a flood of connections may take them all).
    public func openSockets(on group: any EventLoopGroup) async {
        let families = Set(configuration.upstreams.map { $0.protocol == .inet6 })
        for loop in group.makeIterator() {
            for inet6 in families { await sockets.open(on: loop, inet6: inet6) }
        }
    }

    /// The configuration new questions use.
    public var configuration: ForwarderConfiguration { current.withLockedValue { $0.configuration } }
    var health: UpstreamHealth { current.withLockedValue { $0.health } }

    /// Puts new upstreams or timeouts in force for the questions that start from now on. When the
    /// upstream list itself is unchanged its health records are kept, so a reload that only
    /// changes a timeout does not retry a dead upstream first again.
    public func replace(with configuration: ForwarderConfiguration) {
        current.withLockedValue { set in
            let sameUpstreams = set.configuration.upstreams == configuration.upstreams
                && set.configuration.failuresBeforeBackoff == configuration.failuresBeforeBackoff
                && set.configuration.backoff == configuration.backoff
            set = UpstreamSet(configuration, health: sameUpstreams ? set.health : nil)
        }
        // The pooled sockets are already open: the firewall turned on or off (or its mark changed)
        // re-marks them in place, before any later question on their loops is sent.
        sockets.setMark(configuration.socketMark)
    }

    /// Asks the upstreams, with the exchange started on `loop` whatever thread asks: a UDP
    /// listener's thread, or the firewall's lookups on the cooperative pool. Started on the asking
    /// thread, its allocations came from that thread's malloc arena and were freed on the loop and
    /// the pool, and glibc kept ~10 MiB more and crept (`bench/soak.sh`, README "Soak").
    public func resolve(_ question: OutgoingQuestion, on loop: any EventLoop) -> EventLoopFuture<CachedAnswer> {
        guard loop.inEventLoop else {
            return loop.flatSubmit { self.resolve(question, on: loop) }
        }
        let set = current.withLockedValue { $0 }
        guard outstanding.current < set.configuration.maximumOutstanding else {
            return loop.makeSucceededFuture(.failure(question, receivedAt: NIODeadline.now().uptimeNanoseconds))
        }
        outstanding.increment()
        return loop.makeFutureWithTask {
            defer { self.outstanding.decrement() }
            return await self.resolve(question, using: set, on: loop)
        }
    }

    func resolve(_ question: OutgoingQuestion, on loop: any EventLoop) async -> CachedAnswer {
        await resolve(question, using: current.withLockedValue { $0 }, on: loop)
    }

    /// One question, start to end, against the upstream set that was current when it started.
    private func resolve(_ question: OutgoingQuestion, using set: UpstreamSet, on loop: any EventLoop) async -> CachedAnswer {
        let configuration = set.configuration
        let health = set.health
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
            } catch UpstreamError.tcpExchangesBusy(let limit) {
                // Not the upstream's fault, and every other upstream would need TCP as well.
                busyLog.warning(
                    "tcp-busy", "questions over TCP to upstreams are at their bound; answering SERVFAIL until one ends. Raise LimitNOFILE (ulimit -n) to allow more",
                    metadata: ["upstream.tcp_exchanges": "\(limit)"])
                break
            } catch {
                noteFailure(index, upstream: upstream, reason: "\(error)", in: set)
            }
        }
        let now = NIODeadline.now().uptimeNanoseconds
        if let fallback { return .normalize(fallback, question: question, receivedAt: now) }
        return .failure(question, receivedAt: now)
    }

    /// One upstream: with EDNS, and once more without it when the upstream answers FORMERR or
    /// NOTIMP without an OPT record, however that answer came, over UDP or over TCP after TC
    /// (RFC 6891 §7: a responder that does not implement EDNS answers so). A fresh random ID for
    /// every message sent (RFC 5452 §9.2).
    private func exchange(
        _ dnsQuestion: DNSQuestion, question: OutgoingQuestion, upstream: SocketAddress, timeout: TimeAmount,
        deadline: NIODeadline, on loop: any EventLoop
    ) async throws -> DNSMessage {
        let reply = try await attempt(dnsQuestion, question: question, upstream: upstream, edns: true, timeout: timeout, deadline: deadline, on: loop)
        guard reply.rcode == .formatError || reply.rcode == .notImplemented, reply.edns == nil else { return reply }
        return try await attempt(dnsQuestion, question: question, upstream: upstream, edns: false, timeout: timeout, deadline: deadline, on: loop)
    }

    /// UDP, or TCP when the UDP exchange looks spoofed; over TCP after TC (RFC 7766 §6.2.1).
    private func attempt(
        _ dnsQuestion: DNSQuestion, question: OutgoingQuestion, upstream: SocketAddress, edns: Bool, timeout: TimeAmount,
        deadline: NIODeadline, on loop: any EventLoop
    ) async throws -> DNSMessage {
        let (reply, overTCP) = try await ask(dnsQuestion, question: question, upstream: upstream, edns: edns, timeout: timeout, deadline: deadline, on: loop)
        guard reply.header.truncated, !overTCP else { return reply }
        let left = min(timeout, deadline - NIODeadline.now())
        return try await send(dnsQuestion, question: question, upstream: upstream, edns: edns, tcp: true, timeout: left, on: loop)
    }

    /// Over UDP; over TCP instead when the UDP exchange looked spoofed: a reply in the wrong letter
    /// case, or more unwanted datagrams on the port than the threshold. TCP needs the three-way
    /// handshake, which an off-path spoofer cannot complete, so its answer settles the question;
    /// it is also the fallback for the rare upstream that does not preserve the case we send.
    private func ask(
        _ dnsQuestion: DNSQuestion, question: OutgoingQuestion, upstream: SocketAddress, edns: Bool, timeout: TimeAmount,
        deadline: NIODeadline, on loop: any EventLoop
    ) async throws -> (DNSMessage, overTCP: Bool) {
        let left = min(timeout, deadline - NIODeadline.now())
        do {
            return (try await send(dnsQuestion, question: question, upstream: upstream, edns: edns, tcp: false, timeout: left, on: loop), false)
        } catch let error as UpstreamError where error.suspectsSpoofing {
            spoofingRetries.add(1)
            // The upstream and the reason only, never the name (SPEC §9).
            logger.warning("upstream exchange looked spoofed; asking over TCP", metadata: ["upstream": "\(upstream)", "reason": "\(error)"])
            let rest = min(timeout, deadline - NIODeadline.now())
            return (try await send(dnsQuestion, question: question, upstream: upstream, edns: edns, tcp: true, timeout: rest, on: loop), true)
        }
    }

    private func send(
        _ dnsQuestion: DNSQuestion, question: OutgoingQuestion, upstream: SocketAddress, edns: Bool, tcp: Bool,
        timeout: TimeAmount, on loop: any EventLoop
    ) async throws -> DNSMessage {
        let id = UInt16.random(in: .min ... .max)
        let header = DNSHeader(id: id, recursionDesired: true, checkingDisabled: question.checkingDisabled)
        // Over UDP the letters of the name get a random case, which a reply must echo exactly
        // (draft-vixie-dnsext-dns0x20): one more secret bit per letter for a spoofer to guess.
        let sent = tcp ? dnsQuestion : DNSQuestion(name: CaseRandomizer.randomized(dnsQuestion.name), type: dnsQuestion.type, class: dnsQuestion.class)
        // RFC 3225 §3: the DO bit is passed on as the client set it, so DNSSEC records flow through.
        let message = DNSMessage(
            header: header, questions: [sent],
            edns: edns ? EDNS(udpPayloadSize: UInt16(DNSServerLimits.ednsPayloadSize), dnssecOK: question.dnssecOK) : nil)
        let bytes: [UInt8]
        do {
            bytes = try message.serialize()
        } catch {
            throw UpstreamError.cannotEncode(reason: error.description)
        }
        let matcher = ReplyMatcher(upstream: upstream, id: id, question: dnsQuestion, exactName: tcp ? nil : sent.name.wireBytes)
        if tcp {
            let limit = configuration.maximumTCPExchanges
            guard tcpExchanges.current < limit else { throw UpstreamError.tcpExchangesBusy(limit: limit) }
            tcpExchanges.increment()
            defer { tcpExchanges.decrement() }
            return try await UpstreamExchange.tcp(bytes, matcher: matcher, timeout: timeout, mark: configuration.socketMark, on: loop)
        }
        return try await sockets.exchange(
            bytes, matcher: matcher, timeout: timeout, unwantedThreshold: configuration.unwantedReplyThreshold,
            counter: unwantedReplies, on: loop)
    }

    /// Datagrams on query ports that were not the awaited reply, and UDP exchanges asked again
    /// over TCP because of them, since start (the metrics' spoofing series).
    public var spoofingStatistics: (unwantedReplies: UInt64, tcpRetries: UInt64) {
        (unwantedReplies.total, spoofingRetries.total)
    }

    /// Each upstream's health, in configuration order (the metrics' `scrolloff_upstream_*` series),
    /// for the upstream set in force now.
    public func upstreamStatuses() -> [UpstreamStatus] {
        let set = current.withLockedValue { $0 }
        let states = set.health.states(now: NIODeadline.now().uptimeNanoseconds)
        return zip(set.configuration.upstreams, states).map { address, state in
            UpstreamStatus(
                address: HostPort(host: address.ipAddress ?? "\(address)", port: address.port ?? 0).description, up: state.up,
                consecutiveFailures: state.consecutiveFailures, totalFailures: state.totalFailures)
        }
    }

    /// Logs the upstream and the reason only, never the question: allowed names are not logged
    /// at any level (SPEC §9), and `UpstreamError` descriptions carry no name either.
    private func noteFailure(_ index: Int, upstream: SocketAddress, reason: String, in set: UpstreamSet) {
        if set.health.failed(index, now: NIODeadline.now().uptimeNanoseconds) {
            logger.warning(
                "upstream backed off after repeated failures",
                metadata: ["upstream": "\(upstream)", "reason": "\(reason)", "backoff.s": "\(set.configuration.backoff.nanoseconds / 1_000_000_000)"])
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
