import Foundation

/// Where the shared state lives: `[store] url` (and `password_file`, `tls_ca_file`) read into the
/// parts a connection needs. The URL is the one libpq and `psql` take, so a person can check it
/// with `psql "URL"` first:
///
///     postgresql://scrolloff@db.home.arpa:5432/scrolloff?sslmode=verify-full
///     postgresql://scrolloff@/scrolloff?host=/run/postgresql          (a Unix socket folder)
///
/// A password never sits in the URL (the configuration file is world-readable): it is read from
/// `password_file`, which only root (the helper) may read.
public struct PostgresLocation: Hashable, Sendable, CustomStringConvertible {
    public enum Endpoint: Hashable, Sendable {
        case tcp(host: String, port: Int)
        /// The socket file itself (`<folder>/.s.PGSQL.<port>`), as libpq builds it from `host=`.
        case unixSocket(path: String)
    }

    /// `sslmode` as libpq spells it; the modes postgres-nio can honour.
    public enum TLSMode: String, Hashable, Sendable, CaseIterable {
        /// No TLS (the default on a Unix socket).
        case disable
        /// TLS when the server offers it, without checking its certificate.
        case prefer
        /// TLS or no connection, without checking the certificate (libpq's `require`).
        case require
        /// TLS, the certificate checked against the CA and the host name (the default over TCP).
        case verifyFull = "verify-full"
    }

    public var endpoint: Endpoint
    public var user: String
    public var database: String
    public var tls: TLSMode
    /// PEM file of the CA that signed the server's certificate (`sslrootcert` or `[store] tls_ca_file`);
    /// nil: the system's trust store.
    public var caFile: String?
    public var password: String?

    public init(endpoint: Endpoint, user: String, database: String, tls: TLSMode = .disable, caFile: String? = nil, password: String? = nil) {
        self.endpoint = endpoint
        self.user = user
        self.database = database
        self.tls = tls
        self.caFile = caFile
        self.password = password
    }

    /// For the log and `doctor`: the URL without any secret.
    public var description: String {
        switch endpoint {
        case .tcp(let host, let port):
            let shown = host.contains(":") ? "[\(host)]" : host
            return "postgresql://\(user)@\(shown):\(port)/\(database)?sslmode=\(tls.rawValue)"
        case .unixSocket(let path):
            return "postgresql://\(user)@/\(database)?host=\(path)"
        }
    }

    /// What to write, ending every message about the URL.
    public static let example = "postgresql://USER@HOST:5432/DATABASE?sslmode=verify-full, or postgresql://USER@/DATABASE?host=/run/postgresql for a Unix socket"

    /// Reads a libpq-style URL. - Throws: `PostgresLocationError` saying what is wrong and what to write.
    public init(parsing text: String) throws(PostgresLocationError) {
        guard text.hasPrefix("postgresql://") || text.hasPrefix("postgres://") else {
            throw .init("“\(text)” is not a postgresql:// URL")
        }
        guard let c = URLComponents(string: text) else { throw .init("“\(text)” is not a URL (a space or a stray character?)") }
        if c.password != nil {
            throw .init("the URL holds a password; put it in [store] password_file (readable by root only) and leave it out of the URL")
        }
        guard let user = c.user, !user.isEmpty else { throw .init("the URL names no user (postgresql://USER@…)") }
        let database = String(c.path.drop(while: { $0 == "/" }))
        guard !database.isEmpty, !database.contains("/") else { throw .init("the URL names no database (…/DATABASE at the end of its path)") }
        var options: [String: String] = [:]
        for item in c.queryItems ?? [] {
            guard let value = item.value else { throw .init("“\(item.name)” in the URL has no value") }
            switch item.name {
            case "sslmode", "host", "port", "sslrootcert": options[item.name] = value
            default: throw .init("“\(item.name)” in the URL is not understood here (known: sslmode, host, port, sslrootcert)")
            }
        }
        let portText = options["port"] ?? c.port.map(String.init) ?? "5432"
        guard let port = Int(portText), (1...65535).contains(port) else { throw .init("port “\(portText)” is not 1 to 65535") }
        var tls: TLSMode
        if let socketFolder = options["host"] {
            guard socketFolder.hasPrefix("/") else { throw .init("host=“\(socketFolder)” is not an absolute socket folder") }
            guard c.host.map(\.isEmpty) ?? true else { throw .init("the URL names both a host and a socket folder (host=); keep one") }
            endpoint = .unixSocket(path: socketFolder + (socketFolder.hasSuffix("/") ? "" : "/") + ".s.PGSQL.\(port)")
            tls = .disable
        } else {
            guard let host = c.host, !host.isEmpty else {
                throw .init("the URL names no host (postgresql://USER@HOST/…, or ?host=/run/postgresql for a Unix socket)")
            }
            endpoint = .tcp(host: host.trimmingCharacters(in: CharacterSet(charactersIn: "[]")), port: port)
            // Over a network the default checks who answers: a household's LAN is not a trusted wire.
            tls = .verifyFull
        }
        if let mode = options["sslmode"] {
            guard let m = TLSMode(rawValue: mode) else {
                throw .init("sslmode=“\(mode)” is not one of \(TLSMode.allCases.map(\.rawValue).joined(separator: ", "))")
            }
            tls = m
        }
        if case .unixSocket = endpoint, tls != .disable {
            throw .init("sslmode=\(tls.rawValue) on a Unix socket: TLS is for TCP; leave sslmode out for a socket")
        }
        self.user = user
        self.database = database
        self.tls = tls
        caFile = options["sslrootcert"]
        if let ca = caFile, !ca.hasPrefix("/") { throw .init("sslrootcert=“\(ca)” is not an absolute path") }
    }

    /// Reads the password from `path`: the first line, without its line end.
    /// - Throws: when the file cannot be read, or others may read it.
    public static func readPassword(path: String) throws(PostgresLocationError) -> String {
        var info = stat()
        guard stat(path, &info) == 0 else { throw .init("password_file \(path) cannot be read: \(String(cString: strerror(errno)))") }
        if info.st_mode & 0o077 != 0 {
            throw .init("password_file \(path) may be read by others (mode \(String(info.st_mode & 0o777, radix: 8))); chmod 600 it")
        }
        guard let data = FileManager.default.contents(atPath: path) else { throw .init("password_file \(path) cannot be read") }
        let text = String(decoding: data, as: UTF8.self)
        return String(text.split(separator: "\n", maxSplits: 1, omittingEmptySubsequences: false).first ?? "")
            .trimmingCharacters(in: CharacterSet(charactersIn: "\r"))
    }
}

/// A `[store] url` or `password_file` that cannot be used, in words that say what to write.
public struct PostgresLocationError: Error, Hashable, Sendable, CustomStringConvertible {
    public var problem: String
    public init(_ problem: String) { self.problem = problem }
    public var description: String { problem }
}
