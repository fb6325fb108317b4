import Foundation
import GRDB
import ScrollOffCore

#if canImport(Glibc)
import Glibc
#elseif canImport(Darwin)
import Darwin
#endif

/// RFC 4180 CSV: CRLF line ends, fields with a comma, a quote, CR or LF enclosed in double quotes
/// and inner quotes doubled.
enum CSV {
    static func field(_ text: String) -> String {
        let needsQuotes = text.contains { $0 == "," || $0 == "\"" || $0 == "\r" || $0 == "\n" || $0 == "\r\n" }
        return needsQuotes ? "\"" + text.replacingOccurrences(of: "\"", with: "\"\"") + "\"" : text
    }

    static func line(_ fields: [String]) -> String { fields.map(field).joined(separator: ",") + "\r\n" }
}

/// One exported row: a ledger row or an event (SPEC §12).
public struct ExportRow: Hashable, Sendable {
    public enum Record: String, Sendable {
        case ledger, event
    }

    public var record: Record
    public var id: Int64
    public var time: Instant
    public var profile: String?
    /// The ledger row's reason, or the event's kind.
    public var what: String
    /// Ledger rows only.
    public var deltaSeconds: Int64?
    public var entry: String?
    /// Urge events only (SPEC §9 privacy).
    public var clientIP: String?
    /// The ledger note or the event's message.
    public var text: String?
    /// The event's machine-readable details, JSON text.
    public var payload: String?
    /// `time` as RFC 3339 in UTC, exact to the millisecond: `2026-11-21T23:40:17.123Z`.
    public var timeUTC: String { Store.iso8601(time.millisecondsSince1970) }

    public init(record: Record, id: Int64, time: Instant, profile: String?, what: String, deltaSeconds: Int64?, entry: String?,
                clientIP: String?, text: String?, payload: String?) {
        self.record = record
        self.id = id
        self.time = time
        self.profile = profile
        self.what = what
        self.deltaSeconds = deltaSeconds
        self.entry = entry
        self.clientIP = clientIP
        self.text = text
        self.payload = payload
    }
}

extension Store {
    /// The header of `exportCSV()`: ledger rows and events in one table, told apart by `record`.
    public static let csvHeader = ["record", "id", "time_utc", "time_ms", "profile", "reason_or_kind", "delta_seconds",
                                   "entry", "client_ip", "text"]

    /// `scrolloff export --csv` (SPEC §12): every ledger row and event still kept, oldest first,
    /// as RFC 4180 CSV. `text` is the ledger note or the event's message. The same rows as
    /// `exportRows()`, so the two formats never disagree. `profiles`, when given, keeps the rows
    /// of those profiles only (SPEC §11: a member exports their own profile, never another's).
    public func exportCSV(profiles: Set<String>? = nil) throws(StoreError) -> String {
        var out = CSV.line(Self.csvHeader)
        for r in try exportRows(profiles: profiles) {
            out += CSV.line([r.record.rawValue, String(r.id), Self.iso8601(r.time.millisecondsSince1970), String(r.time.millisecondsSince1970),
                             r.profile ?? "", r.what, r.deltaSeconds.map(String.init) ?? "", r.entry ?? "", r.clientIP ?? "", r.text ?? ""])
        }
        return out
    }

    /// `scrolloff export --json` (SPEC §12): every ledger row and event still kept, oldest first,
    /// as typed rows (ledger rows before events at the same instant, then by id); with `profiles`,
    /// those profiles' rows only.
    public func exportRows(profiles: Set<String>? = nil) throws(StoreError) -> [ExportRow] {
        let rows = try allExportRows()
        guard let profiles else { return rows }
        return rows.filter { $0.profile.map(profiles.contains) ?? false }
    }

    private func allExportRows() throws(StoreError) -> [ExportRow] {
        try read { db in
            try Row.fetchAll(db, sql: """
                SELECT 'ledger' AS record, id, time, profile, reason AS what, delta_seconds AS delta, entry, NULL AS client_ip,
                       note AS text, NULL AS payload
                FROM ledger
                UNION ALL
                SELECT 'event', id, time, profile, kind, NULL, entry, client_ip, message, payload FROM events
                ORDER BY time, record DESC, id
                """).map { r in
                ExportRow(record: ExportRow.Record(rawValue: r["record"]) ?? .event, id: r["id"],
                          time: Instant(millisecondsSince1970: r["time"]), profile: r["profile"], what: r["what"],
                          deltaSeconds: r["delta"], entry: r["entry"], clientIP: r["client_ip"], text: r["text"], payload: r["payload"])
            }
        }
    }

    /// Writes `exportCSV()` to `path`, mode 0600, through a temporary file and a rename so a
    /// reader never sees half an export.
    public func exportCSV(to path: String) throws(StoreError) {
        let text = try exportCSV()
        let temporary = path + ".tmp-\(getpid())"
        let fd = open(temporary, O_WRONLY | O_CREAT | O_TRUNC | O_CLOEXEC, StateFiles.fileMode)
        guard fd >= 0 else { throw .filesystem(path: temporary, operation: "create", errno: errno) }
        var bytes = Array(text.utf8)[...]
        while !bytes.isEmpty {
            let n = bytes.withUnsafeBytes { Glibc.write(fd, $0.baseAddress, $0.count) }
            if n < 0 {
                let e = errno
                if e == EINTR { continue }
                close(fd)
                unlink(temporary)
                throw e == ENOSPC ? .diskFull(path: path) : .filesystem(path: path, operation: "write", errno: e)
            }
            bytes = bytes.dropFirst(n)
        }
        let synced = fsync(fd) == 0
        close(fd)
        guard synced, rename(temporary, path) == 0 else {
            let e = errno
            unlink(temporary)
            throw .filesystem(path: path, operation: "save", errno: e)
        }
    }

    /// `2026-11-21T23:40:17.123Z`; exact to the millisecond and independent of the host's zone.
    static func iso8601(_ ms: Int64) -> String {
        let seconds = ms >= 0 ? ms / 1000 : (ms - 999) / 1000
        let millis = ms - seconds * 1000
        var t = time_t(seconds)
        var parts = tm()
        gmtime_r(&t, &parts)
        func pad(_ n: Int32, _ width: Int) -> String {
            let s = String(n)
            return String(repeating: "0", count: max(0, width - s.count)) + s
        }
        return "\(pad(parts.tm_year + 1900, 4))-\(pad(parts.tm_mon + 1, 2))-\(pad(parts.tm_mday, 2))T"
            + "\(pad(parts.tm_hour, 2)):\(pad(parts.tm_min, 2)):\(pad(parts.tm_sec, 2)).\(pad(Int32(millis), 3))Z"
    }
}
