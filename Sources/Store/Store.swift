import GRDB
import ScrollOffCore

#if canImport(Glibc)
import Glibc
#elseif canImport(Darwin)
import Darwin
#endif

/// The helper's state in SQLite (SPEC §12), owned by the helper alone: the CLI never opens it.
///
/// Durability choices, and why:
/// - One connection (`DatabaseQueue`), so there is exactly one writer and every commit is
///   serialised; the helper has no read load that would need a pool.
/// - WAL journal: a crash (kill -9, power loss) leaves either the last committed state or the one
///   before, never a torn one, and a commit is one append to the WAL plus its fsync.
/// - `synchronous = FULL` for every transaction, not only ledger writes: in WAL mode NORMAL may lose
///   the last commits on power loss, which would break "every credit change commits before it is
///   acknowledged" (kill -9 loses nothing acknowledged; SPEC §4: balance = the sum of the ledger). The helper writes a handful of transactions per minute, and even with
///   FULL the crash probe commits a few hundred per second, so the extra fsync costs nothing that matters.
/// - Foreign keys on; a 5 s busy timeout in case `sqlite3` or a backup tool holds a lock briefly.
public final class Store: Sendable {
    /// `<state dir>/scrolloff.sqlite`.
    public let path: String
    let queue: DatabaseQueue

    /// Opens (creating if needed) the database in `directory`, checks it and brings its schema up to date.
    /// - Throws: `.corrupt` when `PRAGMA quick_check` fails, `.newerSchema` when a newer build
    ///   wrote it, `.readOnly`, `.diskFull`, `.filesystem` for the directory or file.
    public init(directory: String) throws(StoreError) {
        let path = try StateFiles.prepare(directory: directory)
        self.path = path
        var config = Configuration()
        config.foreignKeysEnabled = true
        config.busyMode = .timeout(5)
        config.label = "scrolloff.store"
        // Not `config.journalMode = .wal`: GRDB then sets `synchronous = NORMAL` after this closure runs.
        config.prepareDatabase { db in
            let mode = try String.fetchOne(db, sql: "PRAGMA journal_mode = WAL")
            guard mode == "wal" else { throw StoreError.readOnly(path: path, detail: "WAL journal refused (got \(mode ?? "nothing"))") }
            try db.execute(sql: "PRAGMA synchronous = FULL")
        }
        do {
            queue = try DatabaseQueue(path: path, configuration: config)
        } catch {
            throw StoreError.from(error, path: path)
        }
        try check()
        try migrate()
        Self.tightenSidecars(of: path)
    }

    private func check() throws(StoreError) {
        let problems = try integrityCheck().problems
        if !problems.isEmpty { throw .corrupt(path: path, detail: problems.prefix(3).joined(separator: "; ")) }
    }

    private func migrate() throws(StoreError) {
        let migrator = Schema.migrator
        do {
            try queue.writeWithoutTransaction { db in
                let applied = try migrator.appliedIdentifiers(db)
                let unknown = applied.subtracting(Schema.identifiers)
                if !unknown.isEmpty { throw StoreError.newerSchema(path: path, unknownMigrations: unknown.sorted()) }
            }
            try migrator.migrate(queue)
        } catch {
            throw StoreError.from(error, path: path)
        }
    }

    /// SQLite gives `-wal` and `-shm` the database file's mode; this only repairs files an older
    /// build or a manual `sqlite3` session left more open.
    private static func tightenSidecars(of path: String) {
        for suffix in ["-wal", "-shm"] { _ = chmod(path + suffix, StateFiles.fileMode) }
    }

    // MARK: Running SQL with typed errors

    /// A write transaction; COMMIT has succeeded when this returns, and any error rolled it back whole.
    func write<T>(_ body: (Database) throws -> T) throws(StoreError) -> T {
        do {
            return try queue.write(body)
        } catch {
            throw StoreError.from(error, path: path)
        }
    }

    func read<T>(_ body: (Database) throws -> T) throws(StoreError) -> T {
        do {
            return try queue.read(body)
        } catch {
            throw StoreError.from(error, path: path)
        }
    }

    // MARK: Doctor and reset

    /// `PRAGMA quick_check` for `doctor` (SPEC §11). Problems are SQLite's own words; empty means ok.
    public func integrityCheck() throws(StoreError) -> IntegrityReport {
        let lines: [String] = try read { db in try String.fetchAll(db, sql: "PRAGMA quick_check") }
        return IntegrityReport(problems: lines == ["ok"] ? [] : lines)
    }

    /// `scrolloff-dns reset --wipe` (SPEC §12): deletes every row of every table in one
    /// transaction, then vacuums so deleted rows do not linger in free pages or the WAL.
    public func wipe() throws(StoreError) {
        try write { db in
            let tables = try String.fetchAll(db, sql: """
                SELECT name FROM sqlite_master WHERE type = 'table'
                AND name NOT LIKE 'sqlite_%' AND name != 'grdb_migrations'
                """)
            // Children before `profiles`, so no foreign key is ever left dangling mid-way.
            for table in tables where table != "profiles" { try db.execute(sql: "DELETE FROM \(table.quotedDatabaseIdentifier)") }
            try db.execute(sql: "DELETE FROM profiles")
            if try db.tableExists("sqlite_sequence") { try db.execute(sql: "DELETE FROM sqlite_sequence") }
        }
        do {
            try queue.vacuum()
            try queue.writeWithoutTransaction { db in try db.execute(sql: "PRAGMA wal_checkpoint(TRUNCATE)") }
        } catch {
            throw StoreError.from(error, path: path)
        }
    }
}

/// The result of `Store.integrityCheck()`.
public struct IntegrityReport: Hashable, Sendable {
    /// SQLite's findings; empty when `quick_check` said "ok".
    public var problems: [String]
    public var isOK: Bool { problems.isEmpty }
}
