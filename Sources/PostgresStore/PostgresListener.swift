import Foundation
import Logging
import NIOCore
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
    let logger: Logger

    public init(store: PostgresStateStore, pollInterval: Duration = .seconds(1), logger: Logger = Logger(label: "scrolloff.store.listen")) {
        self.store = store
        self.pollInterval = pollInterval
        self.logger = logger
    }

    /// Runs until cancelled, reconnecting after failures; `onChange` is awaited before the next one.
    public func run(onChange: @escaping @Sendable (Reason) async -> Void) async {
        var downSince: ContinuousClock.Instant?
        var id = 1_000_000
        while !Task.isCancelled {
            id += 1
            do {
                let connection = try await PostgresConnection.connect(configuration: try store.session.configuration(), id: id, logger: logger)
                if let since = downSince {
                    let down = ContinuousClock.now - since
                    downSince = nil
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
                    store.session.counters.withLockedValue { $0.failures += 1 }
                    logger.warning("lost the household database; DNS answers from the rules in force, changes are refused until it is back",
                                   metadata: ["store.location": "\(store.location)", "error": "\(error)"])
                }
                try? await Task.sleep(for: pollInterval)
            }
        }
    }

    private func serve(_ connection: PostgresConnection, onChange: @escaping @Sendable (Reason) async -> Void) async throws {
        let node = store.node
        let store = self.store
        let pollInterval = self.pollInterval
        let logger = self.logger
        try await withThrowingTaskGroup(of: Void.self) { group in
            group.addTask {
                try await connection.listen(on: PostgresStateStore.channel) { notifications in
                    for try await n in notifications {
                        let parts = n.payload.split(separator: " ")
                        guard parts.count == 3, let version = Int64(parts[0]), let sent = Int64(parts[2]) else { continue }
                        let from = String(parts[1])
                        guard from != node, store.isNewer(version) else { continue }
                        let lag = Int64(Date().timeIntervalSince1970 * 1000) - sent
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
                    let rows = try await connection.query("SELECT version FROM household WHERE id = 1", logger: logger)
                    for try await version in rows.decode(Int64.self) where store.isNewer(version) {
                        await onChange(.polled)
                    }
                }
            }
            try await group.next()
            group.cancelAll()
        }
    }
}
