import ScrollOffCore
import Sinkhole

/// `[dns]`: the sinkhole (SPEC §9).
public enum DNSKeys {
    static let listenAllowed = "ADDR:PORT with a numeric address, such as \"127.0.0.1:53\" or \"[::1]:53\"; port 0 picks a free one"
    public static let listen = Setting(
        .dns, "listen", .texts,
        default: .derived(shown: "[\"127.0.0.1:53\", \"[::1]:53\"]", meaning: "as root; an ordinary user's default is [\"127.0.0.1:5300\"]"),
        allowed: listenAllowed,
        doc: "Where to answer DNS; \"0.0.0.0:53\" and \"[::]:53\" serve a whole network.",
        reload: .restart(\.listen))
    public static let upstreams = Setting(
        .dns, "upstreams", .texts, default: .value("[]"),
        allowed: "[] (the nameservers of /etc/resolv.conf) or ADDR[:PORT] with a numeric address, such as \"9.9.9.9\" or \"[2620:fe::fe]:53\"",
        doc: "Resolvers to forward ordinary queries to, in failover order; [] = the nameservers of /etc/resolv.conf, never this server.",
        reload: .applies(\.upstreams))
    public static let upstreamTimeout = Setting(
        .dns, "upstream_timeout", .duration(Span(milliseconds: 50) ... .seconds(30)), default: .value("\"2s\""),
        allowed: "50ms to 30s",
        doc: "How long one upstream may take before the next is tried; past twice this the answer is SERVFAIL.",
        reload: .applies(\.forwarder.perUpstream))
    public static let unwantedReplyThreshold = Setting(
        .dns, "unwanted_reply_threshold", .integer(0...65_536), default: .value("10"),
        allowed: "0 (never) to 65536 datagrams",
        doc: "Datagrams on an upstream port answering none of its questions before the port is replaced and its questions asked over TCP.",
        reload: .applies(\.forwarder.unwantedReplyThreshold))
    public static let blockingMode = Setting(
        .dns, "blocking_mode", .choice(BlockingMode.allCases.map(\.rawValue)), default: .value("\"null\""),
        allowed: BlockingMode.allCases.map(\.rawValue).joined(separator: ", "),
        doc: "The answer to a blocked name: null (A 0.0.0.0, AAAA ::), nxdomain or refused.",
        reload: .applies(\.blockingMode))
    public static let blockedTTL = Setting(
        .dns, "blocked_ttl", .seconds(.seconds(1) ... .seconds(10)), default: .value("10"),
        allowed: "1s to 10s (SPEC §9: blocked answers live at most 10 s)",
        doc: "TTL of a blocked answer: short, so a name opens soon after a credit is spent.",
        reload: .applies(\.blockedTTL))
    public static let blockEncryptedDNS = Setting(
        .dns, "block_encrypted_dns", .bool,
        default: .derived(shown: "false", meaning: "left out, it follows [firewall] enabled"),
        allowed: "true or false",
        doc: "Block the known DNS-over-HTTPS and DNS-over-TLS hosts of the curated list (blocklists/doh).",
        reload: .restart(\.dohEndpointsPath))
    /// The cache's bounds are reconfigured together (the cache starts empty).
    static let cache = ReloadPart.applies(\.cache, named: .label("dns.cache"))
    public static let cacheSize = Setting(
        .dns, "cache_size", .integer(1...10_000_000), default: .value("100000"),
        allowed: "1 to 10000000 answers",
        doc: "Most answers kept in the cache (their bytes are bounded too, at 512 per answer of this bound).",
        reload: cache)
    public static let cacheMinTTL = Setting(
        .dns, "cache_min_ttl", .seconds(.zero ... .hours(1)), default: .value("0"),
        allowed: "0 (keep upstream TTLs) to 1h",
        doc: "Cached answers live at least this long, at most cache_max_ttl.",
        reload: cache)
    public static let cacheMaxTTL = Setting(
        .dns, "cache_max_ttl", .seconds(.seconds(1) ... .hours(24 * 7)), default: .value("86400"),
        allowed: "1s to 7d",
        doc: "Cached answers live at most this long.",
        reload: cache)
    public static let cacheMaxNegativeTTL = Setting(
        .dns, "cache_max_negative_ttl", .seconds(.zero ... .hours(24)), default: .value("3600"),
        allowed: "0 (no negative caching) to 1d; RFC 2308 §5 suggests at most 3h",
        doc: "Longest a \"no such name\" answer is cached.",
        reload: cache)
    public static let serveStaleMaxAge = Setting(
        .dns, "serve_stale_max_age", .seconds(.zero ... .hours(24 * 7)), default: .value("86400"),
        allowed: "0 (never serve stale) to 7d; RFC 8767 suggests 1d to 3d",
        doc: "When every upstream fails, an expired answer is still given (TTL 30 s) this long after it expired.",
        reload: cache)
    /// The limit and its burst make one bucket, named after the limit.
    static let rate = ReloadPart.applies(\.rateLimit, named: .firstKey)
    public static let rateLimit = Setting(
        .dns, "rate_limit", .integer(0...1_000_000), default: .value("0"),
        allowed: "0 (off) to 1000000 queries per second per client",
        doc: "Queries per second one client address may send; beyond it the answer is REFUSED.",
        reload: rate)
    public static let rateLimitBurst = Setting(
        .dns, "rate_limit_burst", .integer(0...10_000_000), default: .value("0"),
        allowed: "0 (twice rate_limit) to 10000000 queries",
        doc: "Queries a client may send at once before rate_limit applies.",
        reload: rate)
    /// The bounds of DNS over TCP are taken at start, as one part.
    static let tcp = ReloadPart.restart(\.tcp, named: .label("dns.tcp_*"))
    public static let tcpConnections = Setting(
        .dns, "tcp_connections", .integer(1...65_536), default: .value("256"),
        allowed: "1 to 65536 connections",
        doc: "DNS-over-TCP connections open at once; past it a newcomer replaces the idlest of the address holding most, or is closed.",
        reload: tcp)
    public static let tcpConnectionsPerClient = Setting(
        .dns, "tcp_connections_per_client", .integer(1...65_536), default: .value("32"),
        allowed: "1 to 65536 connections, at most tcp_connections",
        doc: "DNS-over-TCP connections one client address may hold.",
        reload: tcp)
    public static let tcpQueriesPerConnection = Setting(
        .dns, "tcp_queries_per_connection", .integer(1...65_535), default: .value("64"),
        allowed: "1 to 65535 queries",
        doc: "Queries one connection may have being answered at once; further pipelined queries wait.",
        reload: tcp)
    public static let tcpQueriesPerClient = Setting(
        .dns, "tcp_queries_per_client", .integer(1...65_535), default: .value("128"),
        allowed: "1 to 65535 queries",
        doc: "Queries one client address may have being answered at once over all its connections.",
        reload: tcp)
    public static let tcpIdleTimeout = Setting(
        .dns, "tcp_idle_timeout", .duration(Span(milliseconds: 100) ... .minutes(10)), default: .value("\"10s\""),
        allowed: "100ms to 10min",
        doc: "A connection idle this long is closed, and so is one whose client reads none of its replies for this long.",
        reload: tcp)
    public static let tcpUnsentBytes = Setting(
        .dns, "tcp_unsent_bytes", .integer(4096...64 << 20), default: .value("65536"),
        allowed: "4096 to 67108864 bytes",
        doc: "Reply bytes a connection may have waiting for its client; past it the connection is not read until the client catches up.",
        reload: tcp)

    public static let all = [
        listen, upstreams, upstreamTimeout, unwantedReplyThreshold, blockingMode, blockedTTL, blockEncryptedDNS,
        cacheSize, cacheMinTTL, cacheMaxTTL, cacheMaxNegativeTTL, serveStaleMaxAge, rateLimit, rateLimitBurst,
        tcpConnections, tcpConnectionsPerClient, tcpQueriesPerConnection, tcpQueriesPerClient, tcpIdleTimeout, tcpUnsentBytes,
    ]
}
