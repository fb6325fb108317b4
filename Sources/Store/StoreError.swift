import GRDB

/// Why the store could not do what was asked. Every message says what failed and what to do, and
/// whether anything was lost: a failed commit rolls back whole, so nothing half-written remains and
/// nothing that was acknowledged before is touched.
public enum StoreError: Error, Hashable, Sendable, CustomStringConvertible {
    /// SQLITE_FULL: the filesystem (or the configured page limit) has no room for the change.
    case diskFull(path: String)
    /// The file, its directory or the filesystem is read-only, or the helper lacks permission.
    case readOnly(path: String, detail: String)
    /// `PRAGMA quick_check` failed or SQLite reported corruption.
    case corrupt(path: String, detail: String)
    /// The database was written by a newer Scroll Off with migrations this build does not know.
    case newerSchema(path: String, unknownMigrations: [String])
    /// The state directory or database file could not be created or given its permissions.
    case filesystem(path: String, operation: String, errno: Int32)
    /// A stored row holds a value this build cannot turn back into the core's types.
    case invalidRow(table: String, detail: String)
    /// Another process held the database locked for longer than the busy timeout.
    case busy(path: String)
    /// The change refers to something that does not exist (a profile, a plan id).
    case invalidChange(String)
    /// Any other SQLite failure, with SQLite's own words.
    case sqlite(path: String, code: Int32, message: String)
    /// A shared database (PostgreSQL) could not be reached or did not answer in time.
    case unreachable(location: String, detail: String)
    /// A shared database refused a statement, with its SQLSTATE and its own words.
    case server(location: String, code: String, message: String)
    /// Another helper of the household committed since this one read the state: nothing was
    /// written; the caller reloads the state and decides again on what the other left.
    case staleSnapshot(location: String)
    /// A shared database stopped answering after COMMIT was sent: the change may or may not have
    /// been applied, and only reading the state again tells which.
    case commitOutcomeUnknown(location: String, detail: String)

    public var description: String {
        switch self {
        case .diskFull(let path):
            return "the disk holding \(path) is full; free space and the helper will retry — nothing was lost"
        case .readOnly(let path, let detail):
            return "\(path) cannot be written (\(detail)); check that the filesystem is mounted read-write and that the helper owns the file — nothing was lost"
        case .corrupt(let path, let detail):
            return "\(path) is damaged (\(detail)); stop the helper, keep a copy of the file, then run `scrolloff-dns reset --wipe` to start afresh"
        case .newerSchema(let path, let unknown):
            return "\(path) was written by a newer Scroll Off (schema steps \(unknown.joined(separator: ", ")) are unknown here); install that version again or newer — the file was left untouched"
        case .filesystem(let path, let operation, let errno):
            return "could not \(operation) \(path): \(String(cString: strerror(errno))); check the directory exists and belongs to the helper's user"
        case .busy(let path):
            return "\(path) stayed locked by another process (a second helper, or an open sqlite3 session?); stop it and the helper will retry — nothing was lost"
        case .invalidRow(let table, let detail):
            return "a row of \(table) cannot be read by this build (\(detail)); run `scrolloff doctor` and report it — nothing was changed"
        case .invalidChange(let text):
            return "the change was not saved: \(text)"
        case .sqlite(let path, let code, let message):
            return "SQLite failed on \(path) (code \(code)): \(message) — nothing from this change was saved"
        case .unreachable(let location, let detail):
            return "the household database \(location) cannot be reached (\(detail)); DNS keeps answering from the rules in force — try again once it is back, nothing was changed"
        case .server(let location, let code, let message):
            return "the household database \(location) refused the change (SQLSTATE \(code)): \(message) — nothing from this change was saved"
        case .staleSnapshot(let location):
            return "another resolver of the household changed the state in \(location) first; nothing was saved — try again"
        case .commitOutcomeUnknown(let location, let detail):
            return "the household database \(location) stopped answering after the change was sent (\(detail)), so it may or may not "
                + "have been applied; DNS keeps answering from the rules in force. Once the database answers again (this helper "
                + "reloads its state by itself), see with `scrolloff status` or `scrolloff log` whether the change is there before asking again"
        }
    }

    /// Maps an error thrown by GRDB or SQLite to the typed error for `path`.
    static func from(_ error: any Error, path: String) -> StoreError {
        if let e = error as? StoreError { return e }
        guard let db = error as? DatabaseError else {
            return .sqlite(path: path, code: -1, message: String(describing: error))
        }
        let message = db.message ?? "no message"
        if db.extendedResultCode == .SQLITE_CONSTRAINT_FOREIGNKEY {
            return .invalidChange("a row refers to a profile that does not exist; save the profile first")
        }
        switch db.extendedResultCode {
        case .SQLITE_IOERR_SHMSIZE, .SQLITE_IOERR_SHMMAP:
            // After a clean stop the `-shm` file is gone; on a full disk SQLite cannot give it its
            // first pages (it writes a byte per page instead of risking SIGBUS) and every read fails.
            return .diskFull(path: path)
        default: break
        }
        switch db.resultCode {
        case .SQLITE_FULL:
            // SQLite's unix VFS reports a write that failed with ENOSPC as SQLITE_FULL.
            return .diskFull(path: path)
        case .SQLITE_READONLY, .SQLITE_PERM, .SQLITE_CANTOPEN, .SQLITE_AUTH:
            return .readOnly(path: path, detail: message)
        case .SQLITE_BUSY, .SQLITE_LOCKED:
            return .busy(path: path)
        case .SQLITE_CORRUPT, .SQLITE_NOTADB:
            return .corrupt(path: path, detail: message)
        default:
            return .sqlite(path: path, code: db.extendedResultCode.rawValue, message: message)
        }
    }
}

#if canImport(Glibc)
import Glibc
#elseif canImport(Darwin)
import Darwin
#endif
