import Foundation
import PostgresStore

/// A real PostgreSQL from Debian's packages (`postgresql`, scripts/install-deps.sh --test) in a
/// temporary folder, listening on a Unix socket only, run as the `postgres` system user (initdb
/// refuses root). `stop()` ends it; every test calls it in `defer`, on every path.
final class TestPostgres: @unchecked Sendable {
    let folder: String
    var data: String { folder + "/data" }
    var socketFolder: String { folder + "/run" }
    let port = 5432

    /// The binaries of the newest installed major version.
    static let bin: String = {
        let versions = (try? FileManager.default.contentsOfDirectory(atPath: "/usr/lib/postgresql")) ?? []
        let newest = versions.compactMap(Int.init).max() ?? 15
        return "/usr/lib/postgresql/\(newest)/bin"
    }()

    var location: PostgresLocation {
        // `trust` on the socket: the test cluster has no password; the folder is the guard.
        try! PostgresLocation(parsing: "postgresql://scrolloff@/postgres?host=\(socketFolder)")
    }

    init() throws {
        folder = FileManager.default.temporaryDirectory.appendingPathComponent("scrolloff-pg-\(UUID().uuidString.prefix(8))").path
        try FileManager.default.createDirectory(atPath: socketFolder, withIntermediateDirectories: true)
        try Self.run("/bin/chown", ["-R", "postgres:postgres", folder])
        do {
            try Self.asPostgres("initdb", ["-D", data, "-U", "scrolloff", "--auth=trust", "--no-sync", "-E", "UTF8", "--locale=C"])
            try start()
        } catch {
            stop()
            throw error
        }
    }

    func start() throws {
        try Self.asPostgres("pg_ctl", ["-D", data, "-w", "-t", "30", "-l", folder + "/log",
                                       "-o", "-k \(socketFolder) -c listen_addresses='' -p \(port) -c fsync=off", "start"])
    }

    /// Stops the server (`immediate`: as a crash or a pulled cable would, without a checkpoint).
    func halt() throws {
        try Self.asPostgres("pg_ctl", ["-D", data, "-w", "-m", "immediate", "stop"])
    }

    /// Stops the server if it runs and removes its folder.
    func stop() {
        if FileManager.default.fileExists(atPath: data + "/postmaster.pid") {
            try? Self.asPostgres("pg_ctl", ["-D", data, "-w", "-m", "immediate", "stop"])
        }
        try? FileManager.default.removeItem(atPath: folder)
    }

    static func asPostgres(_ tool: String, _ arguments: [String]) throws {
        try run("/usr/bin/setpriv", ["--reuid=postgres", "--regid=postgres", "--clear-groups", bin + "/" + tool] + arguments)
    }

    struct Failed: Error, CustomStringConvertible {
        var description: String
    }

    /// Runs a tool to its end with `posix_spawn` and `waitpid`: Foundation's `Process` left the
    /// finished `pg_ctl` unreaped on Linux here (as EndToEndTests' harness notes), and the test
    /// waited for ever. Output goes to a file, not a pipe (the server `pg_ctl start` leaves running
    /// would hold a pipe open), and nothing else of the test process is inherited by the server.
    static func run(_ path: String, _ arguments: [String]) throws {
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
    }

    /// glibc's `posix_spawn_file_actions_addclosefrom_np` (2.34), which Swift's Glibc module does not export.
    static let addCloseFrom: (@convention(c) (UnsafeMutablePointer<posix_spawn_file_actions_t>, Int32) -> Int32)? = {
        guard let symbol = dlsym(nil, "posix_spawn_file_actions_addclosefrom_np") else { return nil }
        return unsafeBitCast(symbol, to: (@convention(c) (UnsafeMutablePointer<posix_spawn_file_actions_t>, Int32) -> Int32).self)
    }()
}
