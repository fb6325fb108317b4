import Foundation
import Logging
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
    /// The pause between failed attempts while the database is away.
    static let retryDelay = Duration.milliseconds(250)

    public init(store: PostgresStateStore, pollInterval: Duration = .seconds(1), connectTimeout: TimeAmount = .milliseconds(1500),
                queryTimeout: TimeAmount = .seconds(2), logger: Logger = Logger(label: "scrolloff.store.listen")) {
        self.store = store
        self.pollInterval = pollInterval
        self.connectTimeout = connectTimeout
        self.queryTimeout = queryTimeout
        self.logger = logger
    }

    /// Runs until cancelled, reconnecting after failures; `onChange` is awaited before the next one.
    public func run(onChange: @escaping @Sendable (Reason) async -> Void) async {
        var downSince: ContinuousClock.Instant?
        var id = 1_000_000
        while !Task.isCancelled {
            id += 1
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
                do {
                    // Cancellation closes the connection, which ends the notifications' stream:
                    // the stream itself does not end on cancellation, and a stop would wait for it.
                    try await withTaskCancellationHandler {
                        try await serve(connection, onChange: onChange)
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

    private func serve(_ connection: PostgresConnection, onChange: @escaping @Sendable (Reason) async -> Void) async throws {
        let node = store.node
        let store = self.store
        let pollInterval = self.pollInterval
        let queryTimeout = self.queryTimeout
        let logger = self.logger
        try await withThrowingTaskGroup(of: Void.self) { group in
            group.addTask {
                try await connection.listen(on: PostgresStateStore.channel) { notifications in
                    for try await n in notifications {
                        let parts = n.payload.split(separator: " ")
                        guard parts.count == 3, let version = Int64(parts[0]), let sent = Int64(parts[2]) else { continue }
                        let from = String(parts[1])
                        guard from != node, store.isNewer(version) else { continue }
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
            }
            group.addTask {
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
                }
            }
            try await group.next()
            group.cancelAll()
        }
    }
}
