import Foundation

/// `GET /v1/doctor`: what only the helper knows, from which `scrolloff doctor` makes its checks
/// (SPEC §11). The CLI never opens the database or the list files: it asks for these facts and
/// sends its own DNS probes, so every check tests the path a real query takes.
public struct DoctorFacts: Codable, Sendable, Equatable {
    public var version: String
    public var pid: Int32
    /// The helper's trusted clock (SPEC §11): "refreshed 3 d ago" is measured against this.
    public var now: Date
    /// The profile the facts are about (`?profile=`, default `default`).
    public var profile: String
    /// Every socket the DNS server has bound, as the kernel gave it (port 0 resolved).
    public var listeners: [DoctorListener]
    /// The upstream resolvers the forwarder asks now (after any reload): `doctor` tells a
    /// forwarding loop through systemd-resolved's stub from an upstream that is down.
    public var upstreams: [NameServer]
    /// The forwarder's record of each upstream, in the order of `upstreams`: `doctor` says when
    /// every one is down, even while answers still come from the cache or are served stale.
    public var upstreamHealth: [DoctorUpstreamHealth]
    /// Where and what to probe; nil while no UDP listener is up.
    public var probe: DoctorProbeFacts?
    public var lists: [DoctorListFacts]
    public var clock: DoctorClockFacts
    public var database: DoctorDatabaseFacts
    /// Hosts mode's file and how its writes go; nil in `--mode dns`.
    public var hosts: DoctorHostsFacts?
    /// The firewall table (SPEC §9b); nil while `[firewall]` is off.
    public var firewall: DoctorFirewallFacts?

    public init(
        version: String, pid: Int32, now: Date, profile: String, listeners: [DoctorListener], upstreams: [NameServer] = [],
        upstreamHealth: [DoctorUpstreamHealth] = [],
        probe: DoctorProbeFacts?, lists: [DoctorListFacts], clock: DoctorClockFacts, database: DoctorDatabaseFacts,
        hosts: DoctorHostsFacts? = nil, firewall: DoctorFirewallFacts? = nil
    ) {
        self.firewall = firewall
        self.upstreamHealth = upstreamHealth
        self.hosts = hosts
        self.version = version
        self.pid = pid
        self.now = now
        self.profile = profile
        self.listeners = listeners
        self.upstreams = upstreams
        self.probe = probe
        self.lists = lists
        self.clock = clock
        self.database = database
    }

    enum CodingKeys: String, CodingKey {
        case version, pid, now, profile, listeners, upstreams, upstreamHealth, probe, lists, clock, database, hosts, firewall
    }

    public init(from decoder: any Decoder) throws {
        let c = try decoder.container(keyedBy: CodingKeys.self)
        version = try c.decode(String.self, forKey: .version)
        pid = try c.decode(Int32.self, forKey: .pid)
        now = try c.decode(Date.self, forKey: .now)
        profile = try c.decode(String.self, forKey: .profile)
        listeners = try c.decode([DoctorListener].self, forKey: .listeners)
        // A helper from before upstreams were reported still gets every other check.
        upstreams = try c.decodeIfPresent([NameServer].self, forKey: .upstreams) ?? []
        upstreamHealth = try c.decodeIfPresent([DoctorUpstreamHealth].self, forKey: .upstreamHealth) ?? []
        probe = try c.decodeIfPresent(DoctorProbeFacts.self, forKey: .probe)
        lists = try c.decode([DoctorListFacts].self, forKey: .lists)
        clock = try c.decode(DoctorClockFacts.self, forKey: .clock)
        database = try c.decode(DoctorDatabaseFacts.self, forKey: .database)
        hosts = try c.decodeIfPresent(DoctorHostsFacts.self, forKey: .hosts)
        firewall = try c.decodeIfPresent(DoctorFirewallFacts.self, forKey: .firewall)
    }

    public func encode(to encoder: any Encoder) throws {
        var c = encoder.container(keyedBy: CodingKeys.self)
        // Every key is written, null when unknown, so `--json` consumers see one stable shape.
        try c.encode(version, forKey: .version)
        try c.encode(pid, forKey: .pid)
        try c.encode(now, forKey: .now)
        try c.encode(profile, forKey: .profile)
        try c.encode(listeners, forKey: .listeners)
        try c.encode(upstreams, forKey: .upstreams)
        try c.encode(upstreamHealth, forKey: .upstreamHealth)
        try c.encode(probe, forKey: .probe)
        try c.encode(lists, forKey: .lists)
        try c.encode(clock, forKey: .clock)
        try c.encode(database, forKey: .database)
        try c.encode(hosts, forKey: .hosts)
        try c.encode(firewall, forKey: .firewall)
    }
}

/// One upstream as the forwarder sees it: down while backed off after repeated failures.
public struct DoctorUpstreamHealth: Codable, Sendable, Equatable {
    public var upstream: NameServer
    public var up: Bool
    /// Exchanges that failed since its last answer.
    public var consecutiveFailures: Int

    public init(upstream: NameServer, up: Bool, consecutiveFailures: Int) {
        self.upstream = upstream
        self.up = up
        self.consecutiveFailures = consecutiveFailures
    }
}

/// One bound DNS socket: `udp 127.0.0.1:53`.
public struct DoctorListener: Codable, Sendable, Hashable, CustomStringConvertible {
    public static let udp = "udp"
    public static let tcp = "tcp"

    /// `udp` or `tcp`.
    public var transport: String
    /// A literal address; `0.0.0.0` or `::` for every address of the machine.
    public var host: String
    public var port: Int

    public init(transport: String, host: String, port: Int) {
        self.transport = transport
        self.host = host
        self.port = port
    }

    /// `127.0.0.1:53` or `[::1]:53`.
    public var address: String { host.contains(":") ? "[\(host)]:\(port)" : "\(host):\(port)" }

    /// Whether `host` is a loopback address (127/8 or ::1): a probe sent there never leaves the machine.
    public static func isLoopback(_ host: String) -> Bool { host.hasPrefix("127.") || host == "::1" }
    public var description: String { "\(transport) \(address)" }
}

/// The listener the CLI probes and the names it asks there.
public struct DoctorProbeFacts: Codable, Sendable, Equatable {
    /// Where to send the probes: a UDP listener, a wildcard one as the loopback of its family.
    public var host: String
    public var port: Int
    /// A name blocked right now for the caller's profile, as a query from this machine to `host`
    /// is decided (SPEC §9); when nothing is blocked, `reservedName`.
    public var blockedName: String
    /// The entry that blocks `blockedName`; nil for the reserved name.
    public var blockedEntry: String?
    /// A name under `.invalid` (RFC 6761 §6.4) the sinkhole always answers as blocked and never
    /// forwards: the listener probes ask it, so they leave no trace upstream.
    public var reservedName: String
    /// The answer to a blocked name (SPEC §9): `null` (0.0.0.0 and ::), `nxdomain` or `refused`.
    public var blockingMode: String

    public init(host: String, port: Int, blockedName: String, blockedEntry: String?, reservedName: String, blockingMode: String) {
        self.host = host
        self.port = port
        self.blockedName = blockedName
        self.blockedEntry = blockedEntry
        self.reservedName = reservedName
        self.blockingMode = blockingMode
    }

    enum CodingKeys: String, CodingKey {
        case host, port
        case blockedName = "blocked_name"
        case blockedEntry = "blocked_entry"
        case reservedName = "reserved_name"
        case blockingMode = "blocking_mode"
    }

    public func encode(to encoder: any Encoder) throws {
        var c = encoder.container(keyedBy: CodingKeys.self)
        try c.encode(host, forKey: .host)
        try c.encode(port, forKey: .port)
        try c.encode(blockedName, forKey: .blockedName)
        try c.encode(blockedEntry, forKey: .blockedEntry)
        try c.encode(reservedName, forKey: .reservedName)
        try c.encode(blockingMode, forKey: .blockingMode)
    }
}

/// One downloaded list's freshness.
public struct DoctorListFacts: Codable, Sendable, Equatable {
    public var name: String
    /// The last refresh that left a current copy in force; nil when it was never downloaded.
    public var lastSuccess: Date?
    /// How often it is meant to refresh.
    public var periodSeconds: Int64
    /// Why the last attempt failed; nil after a success.
    public var lastError: String?
    /// The last failure's code (`over-bound`: a copy the household's bound refused, the previous
    /// copy kept); absent from a helper from before.
    public var lastErrorCode: String?

    public init(name: String, lastSuccess: Date?, periodSeconds: Int64, lastError: String?, lastErrorCode: String? = nil) {
        self.name = name
        self.lastSuccess = lastSuccess
        self.periodSeconds = periodSeconds
        self.lastError = lastError
        self.lastErrorCode = lastErrorCode
    }

    enum CodingKeys: String, CodingKey {
        case name
        case lastSuccess = "last_success"
        case periodSeconds = "period_seconds"
        case lastError = "last_error"
    }

    public func encode(to encoder: any Encoder) throws {
        var c = encoder.container(keyedBy: CodingKeys.self)
        try c.encode(name, forKey: .name)
        try c.encode(lastSuccess, forKey: .lastSuccess)
        try c.encode(periodSeconds, forKey: .periodSeconds)
        try c.encode(lastError, forKey: .lastError)
    }
}

/// The trusted clock against the system clock (SPEC §11).
public struct DoctorClockFacts: Codable, Sendable, Equatable {
    public var trusted: Date
    public var wall: Date
    /// `wall - trusted` in seconds.
    public var offsetSeconds: Int64
    /// Beyond this (600 s) the two clocks disagree and a tamper event is recorded.
    public var thresholdSeconds: Int64
    /// `wallClock`, `sameBootElapsed`, `lastTrusted` or `awaitingWallClock`.
    public var basis: String
    /// Tamper events of the last `tamperWindowSeconds`, oldest first.
    public var recentTamper: [DoctorTamperEvent]
    public var tamperWindowSeconds: Int64

    public init(
        trusted: Date, wall: Date, offsetSeconds: Int64, thresholdSeconds: Int64, basis: String,
        recentTamper: [DoctorTamperEvent], tamperWindowSeconds: Int64
    ) {
        self.trusted = trusted
        self.wall = wall
        self.offsetSeconds = offsetSeconds
        self.thresholdSeconds = thresholdSeconds
        self.basis = basis
        self.recentTamper = recentTamper
        self.tamperWindowSeconds = tamperWindowSeconds
    }

    /// `TrustedClock.Basis.awaitingWallClock`: the system clock reads earlier than the build.
    public static let awaitingWallClock = "awaitingWallClock"

    enum CodingKeys: String, CodingKey {
        case trusted, wall, basis
        case offsetSeconds = "offset_seconds"
        case thresholdSeconds = "threshold_seconds"
        case recentTamper = "recent_tamper"
        case tamperWindowSeconds = "tamper_window_seconds"
    }
}

/// A recorded tamper event: when (trusted time) and the sentence stored with it.
public struct DoctorTamperEvent: Codable, Sendable, Equatable {
    public var time: Date
    public var message: String

    public init(time: Date, message: String) {
        self.time = time
        self.message = message
    }
}

/// `PRAGMA quick_check` of the helper's database.
public struct DoctorDatabaseFacts: Codable, Sendable, Equatable {
    public var path: String
    /// SQLite's findings (at most a few); empty when it said "ok".
    public var problems: [String]
    /// The helper's state writes failing now (a full disk); nil when the last write succeeded.
    public var writeFailure: DoctorWriteFailure?

    public init(path: String, problems: [String], writeFailure: DoctorWriteFailure? = nil) {
        self.path = path
        self.problems = problems
        self.writeFailure = writeFailure
    }

    enum CodingKeys: String, CodingKey {
        case path, problems
        case writeFailure = "write_failure"
    }
}

/// State writes that keep failing: since when, how many attempts, the last error.
public struct DoctorWriteFailure: Codable, Sendable, Equatable {
    public var since: Date
    public var attempts: Int
    public var error: String

    public init(since: Date, attempts: Int, error: String) {
        self.since = since
        self.attempts = attempts
        self.error = error
    }
}

extension DoctorProbeFacts {
    /// The listener to send probes to: UDP, loopback first (the probe then never leaves the
    /// machine), a wildcard listener as the loopback address of its family, else the first one.
    public static func target(among listeners: [DoctorListener]) -> (host: String, port: Int)? {
        let udp = listeners.filter { $0.transport == DoctorListener.udp }
        let reachable = udp.map { listener -> (host: String, port: Int) in
            switch listener.host {
            case "0.0.0.0": ("127.0.0.1", listener.port)
            case "::": ("::1", listener.port)
            default: (listener.host, listener.port)
            }
        }
        return reachable.first { DoctorListener.isLoopback($0.host) } ?? reachable.first
    }
}
