/// `[store]`: where the state lives (SPEC §12): SQLite beside the helper, or a PostgreSQL server
/// several helpers of one household share (docs/operations.md).
public enum StoreKeys {
    static let store = ReloadPart.restart(\.store, named: .section(.store))
    public static let backend = Setting(
        .store, "backend", .choice(StoreSettings.Backend.allCases.map(\.rawValue)), default: .value("\"sqlite\""),
        allowed: "sqlite or postgresql",
        doc: "sqlite: one file in state_dir, this helper alone. postgresql: a server every helper of the household shares (url).",
        reload: store)
    public static let url = Setting(
        .store, "url", .text, default: .value("\"\""),
        allowed: "\"\" with sqlite; with postgresql a URL such as \"postgresql://scrolloff@db.home.arpa:5432/scrolloff?sslmode=verify-full\" or \"postgresql://scrolloff@/scrolloff?host=/run/postgresql\"",
        doc: "The PostgreSQL server, as psql takes it (sslmode disable, prefer, require or verify-full; verify-full over TCP when left out). No password here.",
        reload: store)
    public static let passwordFile = Setting(
        .store, "password_file", .text, default: .value("\"\""),
        allowed: HelperKeys.absolutePathAllowed(example: "/etc/scrolloff/db-password"),
        doc: "A file owned by root (mode 600, not a symbolic link) whose first line is the database password; \"\" = none (peer or certificate authentication).",
        reload: store)
    public static let tlsCAFile = Setting(
        .store, "tls_ca_file", .text, default: .value("\"\""),
        allowed: HelperKeys.absolutePathAllowed(example: "/etc/scrolloff/db-ca.pem"),
        doc: "PEM file of the CA that signed the server's certificate; \"\" = the system's trust store.",
        reload: store)
    public static let node = Setting(
        .store, "node", .text, default: .value("\"\""),
        allowed: "\"\" (the host name) or a name of letters, digits, '-' and '.' (at most 63)",
        doc: "This helper's name in the household, unique among the helpers that share the database.",
        reload: store)

    public static let all = [backend, url, passwordFile, tlsCAFile, node]
}

/// `[store]` as read: which backend, and for PostgreSQL where and as whom.
public struct StoreSettings: Equatable, Sendable {
    public enum Backend: String, Sendable, CaseIterable {
        case sqlite, postgresql
    }

    public var backend: Backend = .sqlite
    public var url = ""
    public var passwordFile = ""
    public var tlsCAFile = ""
    public var node = ""

    public init() {}
}
