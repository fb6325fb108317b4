import Foundation
import Logging
import NIOConcurrencyHelpers
import NIOCore
import NIOPosix
import NIOSSL
import PostgresNIO
import Store

/// One value bound to a `$n` placeholder. The store's columns are BIGINT or TEXT only.
enum SQLValue: Sendable {
    case int(Int64?)
    case text(String?)
}

extension SQLValue {
    static func bool(_ b: Bool) -> SQLValue { .int(b ? 1 : 0) }
    /// A count the core keeps as `Int`.
    static func count(_ i: Int) -> SQLValue { .int(Int64(i)) }
}

/// How the store's round trips are going, for metrics and `doctor`: counted here, read by anyone.
public struct PostgresCounters: Hashable, Sendable {
    /// Statements sent (each query of a transaction counts).
    public var roundTrips: Int64 = 0
    /// Statements or connections that failed (unreachable, timed out, refused).
    public var failures: Int64 = 0
    /// Commits refused because another node had committed since this one's snapshot.
    public var staleCommits: Int64 = 0
    /// Notifications from other nodes, and the lag of the last one (commit on the other node to here).
    public var notifications: Int64 = 0
    public var lastNotifyLagMilliseconds: Int64?
    /// Times the listener's `LISTEN` connection was lost (closed, killed, or its own probe
    /// notification not back in time), and times it was opened again after such a loss.
    public var listenerFailures: Int64 = 0
    public var listenerReconnects: Int64 = 0
}

/// The one connection the engine's calls go through, opened on first use and again after a
/// failure. The engine's calls are synchronous (`StateStore`), so each statement waits on its
/// future here, off the event loop, with a deadline: a database that stops answering (its host
/// cut off) fails the call after `statementTimeout` instead of holding the engine.
package final class PostgresSession: @unchecked Sendable {
    let location: PostgresLocation
    let logger: Logger
    let statementTimeout: TimeAmount
    private let group: any EventLoopGroup
    /// Held for a whole call (a transaction's statements), so two callers never interleave on the connection.
    private let lock = NIOLock()
    private var connection: PostgresConnection?
    private var nextID = 0
    package let counters = NIOLockedValueBox(PostgresCounters())
    /// Since when this node's listener has found the database away (nil: reachable, or no
    /// listener runs). While it is, every call is refused at once instead of waiting out its
    /// deadline on a dead route: the engine runs its calls synchronously, so a call stuck for
    /// seconds would hold the engine, and with it the reload the listener asks for the moment
    /// the database is back. The listener clears it as soon as it gets through again.
    package let awaySince = NIOLockedValueBox<ContinuousClock.Instant?>(nil)
    /// Set when the database is back after an outage: the connection from before it may be one
    /// the server has since closed (its FIN or its FATAL lost on the dead route), so the next call
    /// opens a fresh one rather than finding out by failing once.
    private let reopen = NIOLockedValueBox(false)

    /// The database is back after an outage; see `reopen`.
    package func backAfterOutage() {
        reopen.withLockedValue { $0 = true }
        awaySince.withLockedValue { $0 = nil }
    }

    init(location: PostgresLocation, logger: Logger, statementTimeout: TimeAmount = .seconds(5),
         group: any EventLoopGroup = MultiThreadedEventLoopGroup.singleton) {
        self.location = location
        self.logger = logger
        self.statementTimeout = statementTimeout
        self.group = group
    }

    deinit {
        if let c = connection { c.close().whenComplete { _ in withExtendedLifetime(c) {} } }
    }

    package func configuration() throws -> PostgresConnection.Configuration {
        var c: PostgresConnection.Configuration
        switch location.endpoint {
        case .unixSocket(let path):
            c = .init(unixSocketPath: path, username: location.user, password: location.password, database: location.database)
        case .tcp(let host, let port):
            let tls: PostgresConnection.Configuration.TLS
            switch location.tls {
            case .disable:
                tls = .disable
            case .prefer, .require, .verifyFull:
                var t = TLSConfiguration.makeClientConfiguration()
                if location.tls != .verifyFull { t.certificateVerification = .none }
                if let ca = location.caFile { t.trustRoots = .file(ca) }
                let context = try NIOSSLContext(configuration: t)
                tls = location.tls == .prefer ? .prefer(context) : .require(context)
            }
            c = .init(host: host, port: port, username: location.user, password: location.password, database: location.database, tls: tls)
        }
        c.options.connectTimeout = .seconds(3)
        // A helper cut off in the middle of a commit (its route dropped after `SELECT … FOR
        // UPDATE`) leaves its transaction open on the server, holding the household row: every
        // other helper's commits would wait on it until the server noticed the dead connection
        // (TCP keepalive: hours). The server ends such a transaction after 3 s idle instead, inside
        // the others' 5 s statement deadline; a live commit sends its statements back to back.
        c.options.additionalStartupParameters = [("idle_in_transaction_session_timeout", "3000")]
        return c
    }

    /// Runs `body` on the connection, opening it first if needed; any failure closes the
    /// connection (the next call opens a fresh one) and becomes a `StoreError` naming the server.
    func run<T>(_ body: (Statements) throws -> T) throws(StoreError) -> T {
        if let since = awaySince.withLockedValue({ $0 }) {
            counters.withLockedValue { $0.failures += 1 }
            let seconds = (ContinuousClock.now - since).components.seconds
            throw .unreachable(location: location.description, detail: "lost \(seconds) s ago; this helper reconnects as soon as it answers")
        }
        lock.lock()
        defer { lock.unlock() }
        do {
            let conn = try open()
            return try body(Statements(connection: conn, session: self))
        } catch let e as StoreError {
            switch e {
            case .unreachable, .commitOutcomeUnknown: drop()
            default: break
            }
            throw e
        } catch {
            drop()
            counters.withLockedValue { $0.failures += 1 }
            throw Self.storeError(error, location: location)
        }
    }

    private func open() throws -> PostgresConnection {
        if reopen.withLockedValue({ let r = $0; $0 = false; return r }) { drop() }
        if let c = connection, !c.isClosed { return c }
        nextID += 1
        let future = PostgresConnection.connect(on: group.next(), configuration: try configuration(), id: nextID, logger: logger)
        // A server that accepts and never answers (stopped, or its host's network half gone)
        // fails the open after the deadline; a connection it completes later is closed then.
        let conn = try Self.wait(Self.deadline(future, timeout: statementTimeout, closingLate: true))
        connection = conn
        return conn
    }

    private func drop() {
        // The closure keeps the connection until its channel has closed (it must not be freed open).
        if let c = connection { c.close().whenComplete { _ in withExtendedLifetime(c) {} } }
        connection = nil
    }

    /// Waits for `future`, failing with `Timeout` after `timeout`.
    static func wait<T: Sendable>(_ future: EventLoopFuture<T>, timeout: TimeAmount) throws -> T {
        try wait(deadline(future, timeout: timeout))
    }

    private static func wait<T: Sendable>(_ future: EventLoopFuture<T>) throws -> T { try future.wait() }

    /// `future`, or a `Timeout` after `timeout`, whichever comes first. PostgresNIO's own connect
    /// timeout covers the TCP handshake only; a server that accepts and never answers would hold
    /// the startup (and a query on a connection whose peer went silent waits for TCP to give up,
    /// about 15 minutes), so every wait on the server has this deadline.
    /// - Parameter closingLate: the value is a connection; one that arrives after the deadline is closed.
    static func deadline<T: Sendable>(_ future: EventLoopFuture<T>, timeout: TimeAmount, closingLate: Bool = false) -> EventLoopFuture<T> {
        let promise = future.eventLoop.makePromise(of: T.self)
        let timedOut = NIOLockedValueBox(false)
        let deadline = future.eventLoop.scheduleTask(in: timeout) {
            timedOut.withLockedValue { $0 = true }
            promise.fail(Timeout(after: timeout))
        }
        future.whenComplete { result in
            deadline.cancel()
            // After the deadline the promise is failed already (completing it again is ignored).
            if closingLate, timedOut.withLockedValue({ $0 }), case .success(let late) = result, let c = late as? PostgresConnection {
                c.close().whenComplete { _ in withExtendedLifetime(c) {} }
            }
            promise.completeWith(result)
        }
        return promise.futureResult
    }

    struct Timeout: Error, CustomStringConvertible {
        var after: TimeAmount
        var description: String {
            after.nanoseconds % 1_000_000_000 == 0 ? "no answer within \(after.nanoseconds / 1_000_000_000) s" : "no answer within \(after.nanoseconds / 1_000_000) ms"
        }
    }

    /// A typed error for what PostgresNIO or the wait threw: the server's own words when it answered.
    static func storeError(_ error: any Error, location: PostgresLocation) -> StoreError {
        if let e = error as? StoreError { return e }
        if let p = error as? PSQLError {
            if let server = p.serverInfo {
                let code = server[.sqlState] ?? "?"
                let message = server[.message] ?? "no message"
                // 23503: a foreign key (a profile that does not exist); as the SQLite store says it.
                if code == "23503" { return .invalidChange("a row refers to a profile that does not exist; save the profile first") }
                // Class 28, invalid authorization: the server's words alone ("password authentication
                // failed") did not say where the password comes from.
                if code.hasPrefix("28") {
                    return .server(location: location.description, code: code,
                                   message: "\(message); check the user in the URL and the password in [store] password_file (store copy: --password-file)")
                }
                return .server(location: location.description, code: code, message: message)
            }
            let detail = "\(p.code)" + (p.underlying.map { ": \($0)" } ?? "")
            if p.underlying is NIOSSLError || detail.contains("CERTIFICATE_VERIFY_FAILED") {
                return .unreachable(location: location.description, detail: "the server's TLS certificate was not verified (\(detail)); "
                    + "name the CA that signed it in [store] tls_ca_file, or sslrootcert= in the URL")
            }
            return .unreachable(location: location.description, detail: detail)
        }
        return .unreachable(location: location.description, detail: "\(error)")
    }
}

/// The statements of one call, on the session's connection.
struct Statements {
    let connection: PostgresConnection
    let session: PostgresSession

    /// Runs `sql` with `$1…$n` bound to `values`; the rows it returned.
    @discardableResult
    func rows(_ sql: String, _ values: [SQLValue] = []) throws -> [PostgresRandomAccessRow] {
        try result(sql, values).rows.map { $0.makeRandomAccess() }
    }

    /// Runs `sql`; how many rows it changed.
    @discardableResult
    func execute(_ sql: String, _ values: [SQLValue] = []) throws -> Int {
        try result(sql, values).metadata.rows ?? 0
    }

    private func result(_ sql: String, _ values: [SQLValue]) throws -> PostgresQueryResult {
        var binds = PostgresBindings(capacity: values.count)
        for v in values {
            switch v {
            case .int(let i?): binds.append(i)
            case .text(let t?): binds.append(t)
            case .int(nil), .text(nil): binds.appendNull()
            }
        }
        session.counters.withLockedValue { $0.roundTrips += 1 }
        let query = PostgresQuery(unsafeSQL: sql, binds: binds)
        return try PostgresSession.wait(connection.query(query, logger: session.logger), timeout: session.statementTimeout)
    }

    /// A migration step: its statements one by one (each ends with `;` at a line end).
    func script(_ sql: String) throws {
        for statement in sql.components(separatedBy: ";\n") {
            let trimmed = statement.trimmingCharacters(in: .whitespacesAndNewlines)
            if !trimmed.isEmpty { try execute(trimmed.hasSuffix(";") ? String(trimmed.dropLast()) : trimmed) }
        }
    }

    /// BEGIN … COMMIT around `body`; ROLLBACK when it throws. COMMIT's success is the commit.
    ///
    /// Once COMMIT is sent, a failure without the server's answer (the connection dropped, no
    /// answer within the deadline) says nothing of whether the server committed: that is
    /// `StoreError.commitOutcomeUnknown`, never "nothing was changed". A refusal the server sent
    /// (a serialization failure, say) did roll back.
    func transaction<T>(_ begin: String = "BEGIN", _ body: () throws -> T) throws -> T {
        try execute(begin)
        let value: T
        do {
            value = try body()
        } catch {
            _ = try? execute("ROLLBACK")
            throw error
        }
        do {
            try execute("COMMIT")
        } catch {
            let failure = PostgresSession.storeError(error, location: session.location)
            guard case .unreachable(let location, let detail) = failure, !begin.contains("READ ONLY") else { throw failure }
            throw StoreError.commitOutcomeUnknown(location: location, detail: detail)
        }
        return value
    }
}

/// Reading cells by column name, with the store's error for a value of the wrong type.
extension PostgresRandomAccessRow {
    func int(_ column: String) throws -> Int64 { try self[column].decode(Int64.self) }
    func intOrNil(_ column: String) throws -> Int64? { try self[column].decode(Int64?.self) }
    func text(_ column: String) throws -> String { try self[column].decode(String.self) }
    func textOrNil(_ column: String) throws -> String? { try self[column].decode(String?.self) }
    func bool(_ column: String) throws -> Bool { try int(column) != 0 }
}
