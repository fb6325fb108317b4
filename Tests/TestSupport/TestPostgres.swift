import Foundation

/// A real PostgreSQL from Debian's packages (`postgresql`, scripts/install-deps.sh --test) in a
/// temporary folder, listening on a Unix socket (and, if asked, on one TCP address), run as the
/// `postgres` system user (initdb refuses root). `stop()` ends it; every test calls it in `defer`,
/// on every path. In TestSupport so the in-process SharedStoreTests and the end-to-end tests that
/// start real helpers on it share one.
public final class TestPostgres: @unchecked Sendable {
    public let folder: String
    public var data: String { folder + "/data" }
    public var socketFolder: String { folder + "/run" }
    public let port: Int
    /// The TCP address it also listens on (a network namespace's veth end), or nil for the socket only.
    public let tcpAddress: String?
    /// `-c ssl=on …` with the certificate and key it was given, or "" for none.
    private var tlsOptions = ""

    /// The binaries of the newest installed major version.
    static let bin: String = {
        let versions = (try? FileManager.default.contentsOfDirectory(atPath: "/usr/lib/postgresql")) ?? []
        let newest = versions.compactMap(Int.init).max() ?? 15
        return "/usr/lib/postgresql/\(newest)/bin"
    }()

    /// The server's URL as `[store] url` takes it, on the Unix socket.
    // `trust` on the socket: the test cluster has no password; the folder is the guard.
    public var socketURL: String { "postgresql://scrolloff@/postgres?host=\(socketFolder)" }

    /// The server's URL on `tcpAddress` (no TLS: the test cluster has no certificate).
    public var tcpURL: String? { tcpAddress.map { "postgresql://scrolloff@\($0):\(port)/postgres?sslmode=disable" } }

    /// - Parameters:
    ///   - tcpAddress: an address to listen on besides the socket (`trust` from anywhere: a test
    ///     network only).
    ///   - port: the TCP port (and the socket's name).
    ///   - password: when given, TCP logins must prove it with scram-sha-256 (the socket stays
    ///     `trust`, so `query` needs none), as a household's server over the LAN asks.
    ///   - certificate: PEM files of the server's certificate and key: TLS on (`ssl=on`).
    public init(tcpAddress: String? = nil, port: Int = 5432, password: String? = nil, certificate: (certificate: String, key: String)? = nil) throws {
        self.tcpAddress = tcpAddress
        self.port = port
        folder = FileManager.default.temporaryDirectory.appendingPathComponent("scrolloff-pg-\(UUID().uuidString.prefix(8))").path
        try FileManager.default.createDirectory(atPath: socketFolder, withIntermediateDirectories: true)
        var authentication = ["--auth=trust"]
        if let password {
            try (password + "\n").write(toFile: folder + "/pwfile", atomically: false, encoding: .utf8)
            authentication = ["--auth-local=trust", "--auth-host=scram-sha-256", "--pwfile=" + folder + "/pwfile"]
        }
        if let certificate {
            // The server reads its key only when the key is its own and private (it refuses to start otherwise).
            for (from, to) in [(certificate.certificate, "server.crt"), (certificate.key, "server.key")] {
                try FileManager.default.copyItem(atPath: from, toPath: folder + "/" + to)
            }
            chmod(folder + "/server.key", 0o600)
            tlsOptions = " -c ssl=on -c ssl_cert_file=\(folder)/server.crt -c ssl_key_file=\(folder)/server.key"
        }
        try Self.run("/bin/chown", ["-R", "postgres:postgres", folder])
        do {
            try Self.asPostgres("initdb", ["-D", data, "-U", "scrolloff"] + authentication + ["--no-sync", "-E", "UTF8", "--locale=C"])
            if tcpAddress != nil {
                let hba = data + "/pg_hba.conf"
                let rules = (try String(contentsOfFile: hba, encoding: .utf8)) + "host all all 0.0.0.0/0 \(password == nil ? "trust" : "scram-sha-256")\n"
                try rules.write(toFile: hba, atomically: false, encoding: .utf8)
            }
            try start()
        } catch {
            stop()
            throw error
        }
    }

    public func start() throws {
        try Self.asPostgres("pg_ctl", ["-D", data, "-w", "-t", "30", "-l", folder + "/log",
                                       "-o", "-k \(socketFolder) -c listen_addresses='\(tcpAddress ?? "")' -p \(port) -c fsync=off\(tlsOptions)", "start"])
    }

    /// Stops the server (`immediate`: as a crash or a pulled cable would, without a checkpoint).
    public func halt() throws {
        try Self.asPostgres("pg_ctl", ["-D", data, "-w", "-m", "immediate", "stop"])
    }

    /// The server's processes (the postmaster and its children), for a test that stops them with
    /// SIGSTOP: a server that accepts connections and never answers.
    public func processes() -> [pid_t] {
        guard let text = try? String(contentsOfFile: data + "/postmaster.pid", encoding: .utf8),
              let first = text.split(separator: "\n").first, let postmaster = pid_t(first) else { return [] }
        let all = (try? FileManager.default.contentsOfDirectory(atPath: "/proc")) ?? []
        let children = all.compactMap(pid_t.init).filter { pid in
            // /proc/PID/stat: "pid (comm) state ppid …"; comm may hold spaces, so read after the last ')'.
            guard let stat = try? String(contentsOfFile: "/proc/\(pid)/stat", encoding: .utf8),
                  let close = stat.lastIndex(of: ")") else { return false }
            let fields = stat[stat.index(after: close)...].split(separator: " ")
            return fields.count > 1 && pid_t(fields[1]) == postmaster
        }
        return [postmaster] + children
    }

    /// Runs `sql` with psql on the socket; its rows, fields separated by `|`.
    public func query(_ sql: String) throws -> String {
        let output = try Self.run("/usr/bin/setpriv", ["--reuid=postgres", "--regid=postgres", "--clear-groups", Self.bin + "/psql", "-X", "-q", "-A", "-t",
                                                       "-h", socketFolder, "-p", String(port), "-U", "scrolloff", "-d", "postgres", "-c", sql])
        return output.trimmingCharacters(in: .whitespacesAndNewlines)
    }

    /// Stops the server if it runs and removes its folder.
    public func stop() {
        if FileManager.default.fileExists(atPath: data + "/postmaster.pid") {
            try? Self.asPostgres("pg_ctl", ["-D", data, "-w", "-m", "immediate", "stop"])
        }
        try? FileManager.default.removeItem(atPath: folder)
    }

    public static func asPostgres(_ tool: String, _ arguments: [String]) throws {
        try run("/usr/bin/setpriv", ["--reuid=postgres", "--regid=postgres", "--clear-groups", bin + "/" + tool] + arguments)
    }

    public struct Failed: Error, CustomStringConvertible {
        public var description: String

        public init(description: String) { self.description = description }
    }

    /// Runs a tool to its end with `posix_spawn` and `waitpid`: Foundation's `Process` left the
    /// finished `pg_ctl` unreaped on Linux here (as EndToEndTests' harness notes), and the test
    /// waited for ever. Output goes to a file, not a pipe (the server `pg_ctl start` leaves running
    /// would hold a pipe open), and nothing else of the test process is inherited by the server.
    @discardableResult
    static func run(_ path: String, _ arguments: [String]) throws -> String {
        let outputPath = FileManager.default.temporaryDirectory.appendingPathComponent("scrolloff-pg-out-\(UUID().uuidString.prefix(8))").path
        defer { try? FileManager.default.removeItem(atPath: outputPath) }
        var actions = posix_spawn_file_actions_t()
        posix_spawn_file_actions_init(&actions)
        defer { posix_spawn_file_actions_destroy(&actions) }
        posix_spawn_file_actions_addopen(&actions, 0, "/dev/null", O_RDONLY, 0)
        posix_spawn_file_actions_addopen(&actions, 1, outputPath, O_WRONLY | O_CREAT | O_APPEND, 0o644)
        posix_spawn_file_actions_adddup2(&actions, 1, 2)
        if let closeFrom = addCloseFrom { _ = closeFrom(&actions, 3) }
        var attributes = posix_spawnattr_t()
        posix_spawnattr_init(&attributes)
        defer { posix_spawnattr_destroy(&attributes) }
        var empty = sigset_t(), all = sigset_t()
        sigemptyset(&empty)
        sigfillset(&all)
        posix_spawnattr_setsigmask(&attributes, &empty)
        posix_spawnattr_setsigdefault(&attributes, &all)
        posix_spawnattr_setflags(&attributes, Int16(POSIX_SPAWN_SETSIGMASK | POSIX_SPAWN_SETSIGDEF))
        let argv = ([path] + arguments).map { strdup($0) } + [nil]
        defer { for pointer in argv { free(pointer) } }
        var pid: pid_t = 0
        let started = posix_spawn(&pid, path, &actions, &attributes, argv, environ)
        guard started == 0 else { throw Failed(description: "cannot start \(path): \(String(cString: strerror(started)))") }
        var status: Int32 = 0
        while waitpid(pid, &status, 0) < 0 && errno == EINTR {}
        if status != 0 {
            let text = (try? String(contentsOfFile: outputPath, encoding: .utf8)) ?? ""
            throw Failed(description: "\(path) \(arguments.joined(separator: " ")) exited with status \(status): \(text)")
        }
        return (try? String(contentsOfFile: outputPath, encoding: .utf8)) ?? ""
    }

    /// glibc's `posix_spawn_file_actions_addclosefrom_np` (2.34), which Swift's Glibc module does not export.
    static let addCloseFrom: (@convention(c) (UnsafeMutablePointer<posix_spawn_file_actions_t>, Int32) -> Int32)? = {
        guard let symbol = dlsym(nil, "posix_spawn_file_actions_addclosefrom_np") else { return nil }
        return unsafeBitCast(symbol, to: (@convention(c) (UnsafeMutablePointer<posix_spawn_file_actions_t>, Int32) -> Int32).self)
    }()
}
