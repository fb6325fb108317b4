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

    /// Reads the password from `path`: the first line, without its line end. Whoever may change
    /// or read the file has the household's database, and with it every rule of every helper, so
    /// it must be a regular file (not a symbolic link) that root or the helper's own user owns and
    /// no one else may read or write; it is opened once and checked as opened.
    /// - Throws: when the file cannot be read, is not such a file, or is larger than a password file.
    public static func readPassword(path: String, helperUID: uid_t = geteuid()) throws(PostgresLocationError) -> String {
        let fd = open(path, O_RDONLY | O_CLOEXEC | O_NOFOLLOW | O_NONBLOCK)
        guard fd >= 0 else {
            if errno == ELOOP { throw .init("password_file \(path) is a symbolic link; name the file itself") }
            throw .init("password_file \(path) cannot be read: \(String(cString: strerror(errno)))")
        }
        defer { close(fd) }
        var info = stat()
        guard fstat(fd, &info) == 0 else { throw .init("password_file \(path) cannot be read: \(String(cString: strerror(errno)))") }
        guard info.st_mode & S_IFMT == S_IFREG else { throw .init("password_file \(path) is not a regular file") }
        guard info.st_uid == 0 || info.st_uid == helperUID else {
            throw .init("password_file \(path) belongs to uid \(info.st_uid), who can read and change the household's database password; "
                + "chown root:root it")
        }
        if info.st_mode & 0o077 != 0 {
            throw .init("password_file \(path) may be read by others (mode \(String(info.st_mode & 0o777, radix: 8))); chmod 600 it")
        }
        // A password is one short line; a larger file is not one (and is not read into memory).
        let most = 4096
        guard info.st_size <= most else { throw .init("password_file \(path) is \(info.st_size) bytes, more than a password file's \(most)") }
        var bytes = [UInt8](repeating: 0, count: most + 1)
        var filled = 0
        while filled < bytes.count {
            let got = bytes.withUnsafeMutableBytes { read(fd, $0.baseAddress! + filled, $0.count - filled) }
            if got < 0, errno == EINTR { continue }
            guard got >= 0 else { throw .init("password_file \(path) cannot be read: \(String(cString: strerror(errno)))") }
            if got == 0 { break }
            filled += got
        }
        // Split on any line end: "\r\n" is one Character, which a split on "\n" never finds (a file
        // written on Windows gave the whole file as the password).
        let text = String(decoding: bytes[..<filled], as: UTF8.self)
        return String(text.split(maxSplits: 1, omittingEmptySubsequences: false, whereSeparator: \.isNewline).first ?? "")
    }
}

/// A `[store] url` or `password_file` that cannot be used, in words that say what to write.
public struct PostgresLocationError: Error, Hashable, Sendable, CustomStringConvertible {
    public var problem: String
    public init(_ problem: String) { self.problem = problem }
    public var description: String { problem }
}
