import Foundation
import Logging
import NIOConcurrencyHelpers
import NIOCore
import NIOPosix
import PostgresNIO

/// Tells this node when another helper of the household committed, so it reloads its state and
/// republishes its DNS snapshot (a change is in force on every helper within a second).
///
/// Two ways, on a connection of its own: `LISTEN` for the commits' `pg_notify` (milliseconds), and
/// once a second the household version, which catches what a notification cannot: commits made
/// while this node was cut off from the database. After a reconnection it reports at once, so a
/// node that comes back converges without waiting for the next commit.
///
/// The version check alone would hide a `LISTEN` that stopped delivering (changes would still
/// arrive, a second late, and nobody would know), so the listener also notifies itself a probe
/// every `probeInterval` on its connection: a probe not back within `probeTimeout`, or the
/// connection lost, is recorded (`ListenerHealth`, for `doctor`; `PostgresCounters`, for the
/// metrics) and the connection opened afresh.
public struct PostgresListener: Sendable {
    public enum Reason: Hashable, Sendable {
        /// Another node's notification; the lag from its commit to here, by the two clocks.
        case notified(node: String, lagMilliseconds: Int64)
        /// The version moved on without a notification reaching this node.
        case polled
        /// The connection to the database is back after `downMilliseconds` without it.
        case reconnected(downMilliseconds: Int64)
    }

    let store: PostgresStateStore
    let pollInterval: Duration
    /// How long an attempt to connect, and the version check on a connection, may wait for the
    /// server. A connection whose peer went silent (its route dropped, the server stopped) would
    /// otherwise hold the check until TCP gives up, about 15 minutes, and the node would neither
    /// notice the cut nor converge when it ends. Past `connectTimeout` the attempt is given up and
    /// another started ``retryDelay`` later. 1.5 s is a little over the kernel's first SYN retry
    /// (1 s), so while the database is away SYNs leave at most 0.75 s apart (0, 1, 1.75, 2.75 …
    /// s) and a node converges within about a second of the route coming back; a LAN server
    /// completes its startup in milliseconds, far inside it.
    let connectTimeout: TimeAmount
    let queryTimeout: TimeAmount
    let logger: Logger
    /// How often the listener notifies itself, and how long its probe may take to come back.
    let probeInterval: Duration
    let probeTimeout: Duration
    /// The pause between failed attempts while the database is away.
    static let retryDelay = Duration.milliseconds(250)

    /// Why a connection that was listening is given up.
    struct Lost: Error, CustomStringConvertible {
        var description: String
    }

    public init(store: PostgresStateStore, pollInterval: Duration = .seconds(1), connectTimeout: TimeAmount = .milliseconds(1500),
                queryTimeout: TimeAmount = .seconds(2), probeInterval: Duration = .seconds(10), probeTimeout: Duration = .seconds(3),
                logger: Logger = Logger(label: "scrolloff.store.listen")) {
        self.store = store
        self.pollInterval = pollInterval
        self.probeInterval = probeInterval
        self.probeTimeout = probeTimeout
        self.connectTimeout = connectTimeout
        self.queryTimeout = queryTimeout
        self.logger = logger
    }

    /// Runs until cancelled, reconnecting after failures; `onChange` is awaited before the next one.
    public func run(onChange: @escaping @Sendable (Reason) async -> Void) async {
        var downSince: ContinuousClock.Instant?
        var id = 1_000_000
        var lostListening = false
        store.listenerHealth.withLockedValue { $0.running = true }
        while !Task.isCancelled {
            id += 1
            // Set once this connection was listening: its end is then a lost listener (besides,
            // perhaps, a database away), which `doctor` and the metrics report.
            let listening = NIOLockedValueBox(false)
            do {
                let connection = try await PostgresSession.deadline(
                    PostgresConnection.connect(on: MultiThreadedEventLoopGroup.singleton.next(), configuration: try store.session.configuration(),
                                               id: id, logger: logger),
                    timeout: connectTimeout, closingLate: true
                ).get()
                if let since = downSince {
                    let down = ContinuousClock.now - since
                    downSince = nil
                    store.session.backAfterOutage()
                    logger.notice("household database reachable again", metadata: ["store.location": "\(store.location)"])
                    await onChange(.reconnected(downMilliseconds: down.components.seconds * 1000 + down.components.attoseconds / 1_000_000_000_000_000))
                }
                if lostListening {
                    lostListening = false
                    store.session.counters.withLockedValue { $0.listenerReconnects += 1 }
                }
                do {
                    // Cancellation closes the connection, which ends the notifications' stream:
                    // the stream itself does not end on cancellation, and a stop would wait for it.
                    try await withTaskCancellationHandler {
                        try await serve(connection, listening: listening, onChange: onChange)
                    } onCancel: {
                        connection.close().whenComplete { _ in withExtendedLifetime(connection) {} }
                    }
                } catch {
                    try? await connection.close()
                    throw error
                }
                try? await connection.close()
            } catch {
                if Task.isCancelled { break }
                if listening.withLockedValue({ $0 }) {
                    lostListening = true
                    noteLost(error)
                    // Only the listener found wanting (its probe not back, its stream ended): the
                    // database answers, so connect again at once without calling it away.
                    if error is Lost { continue }
                }
                if downSince == nil {
                    downSince = .now
                    store.session.awaySince.withLockedValue { $0 = downSince }
                    store.session.counters.withLockedValue { $0.failures += 1 }
                    logger.warning("lost the household database; DNS answers from the rules in force, changes are refused until it is back",
                                   metadata: ["store.location": "\(store.location)", "error": "\(error)"])
                }
                try? await Task.sleep(for: Self.retryDelay)
            }
        }
        // Stopped: nobody will find the database back, so the session tries for itself again.
        store.session.awaySince.withLockedValue { $0 = nil }
    }

    /// Records a lost `LISTEN` connection for `doctor` and the metrics, and says so in the log.
    private func noteLost(_ error: any Error) {
        store.session.counters.withLockedValue { $0.listenerFailures += 1 }
        store.listenerHealth.withLockedValue {
            if $0.downSince == nil { $0.downSince = Date() }
            $0.lastLoss = Date()
            $0.lastDownMilliseconds = nil
            $0.losses += 1
            $0.lastReason = error is Lost ? "\(error)" : "closed: \(Self.why(error))"
        }
        logger.warning("the LISTEN connection to the household database was lost; reconnecting; changes from the other helpers arrive by the once-a-second version check meanwhile",
                       metadata: ["store.location": "\(store.location)", "error": "\(Self.why(error))"])
    }

    /// What the server said (a `PSQLError` describes itself only generically), or the error.
    static func why(_ error: any Error) -> String {
        guard let e = error as? PSQLError else { return "\(error)" }
        return e.serverInfo?[.message] ?? "\(e.code)"
    }

    /// Notifications arrive again (this listener's own probe came back).
    private static func noteListening(_ store: PostgresStateStore, logger: Logger) {
        let back: Int64? = store.listenerHealth.withLockedValue {
            guard let since = $0.downSince else { return nil }
            let down = Int64(Date().timeIntervalSince(since) * 1000)
            $0.downSince = nil
            $0.lastDownMilliseconds = down
            return down
        }
        if let back { logger.notice("notifications from the household database arrive again", metadata: ["store.listen.down_ms": "\(back)"]) }
    }

    private func serve(_ connection: PostgresConnection, listening: NIOLockedValueBox<Bool>,
                       onChange: @escaping @Sendable (Reason) async -> Void) async throws {
        let node = store.node
        let instance = store.instance
        let store = self.store
        let pollInterval = self.pollInterval
        let queryTimeout = self.queryTimeout
        let probeInterval = self.probeInterval
        let probeTimeout = self.probeTimeout
        let logger = self.logger
        // The last probe this connection got back.
        let probed = NIOLockedValueBox<Int64>(0)
        // Its server process, for the log (and a test that ends it with `pg_terminate_backend`).
        let pid = try await PostgresSession.deadline(
            connection.query(PostgresQuery(unsafeSQL: "SELECT pg_backend_pid()::bigint"), logger: logger), timeout: queryTimeout).get()
        for row in pid.rows {
            if let pid = try? row.decode(Int64.self) { store.listenerHealth.withLockedValue { $0.backendPID = pid } }
        }
        try await withThrowingTaskGroup(of: Void.self) { group in
            group.addTask {
                try await connection.listen(on: PostgresStateStore.channel) { notifications in
                    listening.withLockedValue { $0 = true }
                    for try await n in notifications {
                        let parts = n.payload.split(separator: " ")
                        if parts.count == 3, parts[0] == "probe" {
                            if parts[1] == instance, let sequence = Int64(parts[2]) {
                                probed.withLockedValue { $0 = max($0, sequence) }
                                Self.noteListening(store, logger: logger)
                            }
                            continue
                        }
                        // `<version> <node> <instance> <ms>`, or `<version> <node> <ms>` from a
                        // helper before instances. Its own commits are dropped by instance, so a
                        // helper that shares this one's node name is still heard.
                        guard parts.count == 3 || parts.count == 4, let version = Int64(parts[0]), let sent = Int64(parts[parts.count - 1])
                        else { continue }
                        let from = String(parts[1])
                        let own = parts.count == 4 ? parts[2] == instance : from == node
                        guard !own, store.isNewer(version) else { continue }
                        // Both ends on the server's clock: `sent` is its `clock_timestamp()`, and
                        // this machine's is corrected by the offset last measured.
                        let lag = Int64(Date().timeIntervalSince1970 * 1000) - store.clockOffsetMilliseconds - sent
                        store.session.counters.withLockedValue {
                            $0.notifications += 1
                            $0.lastNotifyLagMilliseconds = lag
                        }
                        await onChange(.notified(node: from, lagMilliseconds: lag))
                    }
                }
                throw Lost(description: "its notifications ended")
            }
            group.addTask {
                var sequence: Int64 = 0
                var pending: (sequence: Int64, sent: ContinuousClock.Instant)?
                while !Task.isCancelled {
                    try await Task.sleep(for: pollInterval)
                    let result: PostgresQueryResult
                    do {
                        let query: EventLoopFuture<PostgresQueryResult> = connection.query(
                            PostgresQuery(unsafeSQL: "SELECT version FROM household WHERE id = 1"), logger: logger)
                        result = try await PostgresSession.deadline(query, timeout: queryTimeout).get()
                    } catch {
                        // Closed, so the notifications' stream ends too and `run` connects afresh.
                        connection.close().whenComplete { _ in withExtendedLifetime(connection) {} }
                        throw error
                    }
                    for row in result.rows {
                        if let version = try? row.decode(Int64.self), store.isNewer(version) { await onChange(.polled) }
                    }
                    // The server has just answered on this connection (a server away is the version
                    // check's to find, as above), so a probe still missing means LISTEN stopped delivering.
                    if let p = pending, probed.withLockedValue({ $0 }) < p.sequence, ContinuousClock.now - p.sent > probeTimeout {
                        connection.close().whenComplete { _ in withExtendedLifetime(connection) {} }
                        throw Lost(description: "its own probe notification was not back after \(probeTimeout)")
                    }
                    if listening.withLockedValue({ $0 }), pending.map({ probed.withLockedValue { $0 } >= $0.sequence && ContinuousClock.now - $0.sent >= probeInterval }) ?? true {
                        sequence += 1
                        pending = (sequence, .now)
                        // Sent on this connection, which listens: PostgreSQL delivers it back here. Not
                        // waited for: the check above is what tells whether it came.
                        connection.query(PostgresQuery(unsafeSQL: "SELECT pg_notify('\(PostgresStateStore.channel)', 'probe \(instance) \(sequence)')"),
                                         logger: logger).whenComplete { _ in }
                    }
                }
            }
            try await group.next()
            group.cancelAll()
        }
    }
}
