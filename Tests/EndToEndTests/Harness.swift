import Foundation
import Testing

/// Failures of the harness itself, with what to check.
struct HarnessError: Error, CustomStringConvertible {
    var description: String
    init(_ description: String) { self.description = description }
}

/// A scratch folder per test, removed at the end.
final class Scratch: @unchecked Sendable {
    let path: String

    init() throws {
        path = NSTemporaryDirectory() + "scrolloff-e2e-" + UUID().uuidString
        try FileManager.default.createDirectory(atPath: path, withIntermediateDirectories: true)
        // Set, not left to the umask: StoreTests' FileModeTests set the process-wide umask to 0
        // while other suites run, and the helper refuses a folder others can write (SPEC §11).
        chmod(path, 0o755)
    }

    func file(_ name: String, _ contents: String) throws -> String {
        let full = "\(path)/\(name)"
        try contents.write(toFile: full, atomically: true, encoding: .utf8)
        return full
    }

    func read(_ name: String) -> String {
        (try? String(contentsOfFile: "\(path)/\(name)", encoding: .utf8)) ?? ""
    }

    deinit { try? FileManager.default.removeItem(atPath: path) }
}

/// A process started with `posix_spawn`, its stdin from /dev/null and its output in files.
///
/// Foundation's `Process` is not used: on Linux its exit monitoring stalled when several tests
/// started processes at once, leaving finished children unreaped and the tests waiting.
struct Spawned {
    let pid: pid_t

    /// glibc's `posix_spawn_file_actions_addclosefrom_np` (2.34), which Swift's Glibc module does not export.
    static let addCloseFrom: (@convention(c) (UnsafeMutablePointer<posix_spawn_file_actions_t>, Int32) -> Int32)? = {
        guard let symbol = dlsym(nil, "posix_spawn_file_actions_addclosefrom_np") else { return nil }
        return unsafeBitCast(symbol, to: (@convention(c) (UnsafeMutablePointer<posix_spawn_file_actions_t>, Int32) -> Int32).self)
    }()

    init(_ executable: String, _ arguments: [String], stdout: String, stderr: String) throws {
        var actions = posix_spawn_file_actions_t()
        posix_spawn_file_actions_init(&actions)
        defer { posix_spawn_file_actions_destroy(&actions) }
        posix_spawn_file_actions_addopen(&actions, 0, "/dev/null", O_RDONLY, 0)
        posix_spawn_file_actions_addopen(&actions, 1, stdout, O_WRONLY | O_CREAT | O_APPEND, 0o644)
        posix_spawn_file_actions_addopen(&actions, 2, stderr, O_WRONLY | O_CREAT | O_APPEND, 0o644)
        // Nothing else of the test process: its other tests' sockets and pipes are not CLOEXEC, and a
        // helper under `prlimit --nofile=200` once started with 219 of them and no room left.
        if let closeFrom = Self.addCloseFrom { _ = closeFrom(&actions, 3) }
        let argv = ([executable] + arguments).map { strdup($0) } + [nil]
        defer { for pointer in argv { free(pointer) } }
        // Test threads block most signals, and a child inherits the mask: without a reset here,
        // SIGTERM would never reach it.
        var attributes = posix_spawnattr_t()
        posix_spawnattr_init(&attributes)
        defer { posix_spawnattr_destroy(&attributes) }
        var empty = sigset_t()
        sigemptyset(&empty)
        var all = sigset_t()
        sigfillset(&all)
        posix_spawnattr_setsigmask(&attributes, &empty)
        posix_spawnattr_setsigdefault(&attributes, &all)
        posix_spawnattr_setflags(&attributes, Int16(POSIX_SPAWN_SETSIGMASK | POSIX_SPAWN_SETSIGDEF))
        var pid: pid_t = 0
        let result = posix_spawn(&pid, executable, &actions, &attributes, argv, environ)
        guard result == 0 else { throw HarnessError("cannot start \(executable): \(String(cString: strerror(result)))") }
        self.pid = pid
    }

    /// Exit status if the process has ended (and reaps it), nil while it runs.
    func poll() -> Int32? {
        var status: Int32 = 0
        let result = waitpid(pid, &status, WNOHANG)
        return result == pid ? status : (result < 0 ? -1 : nil)
    }

    @discardableResult
    func wait() -> Int32 {
        var status: Int32 = 0
        while waitpid(pid, &status, 0) < 0 && errno == EINTR {}
        return status
    }
}

/// A child process whose stdout and stderr go to files, terminated when released.
final class Child: @unchecked Sendable {
    let process: Spawned
    let name: String
    let arguments: [String]
    let stdoutPath: String
    let stderrPath: String
    private var exitStatus: Int32?

    init(_ executable: String, _ arguments: [String], scratch: Scratch, label: String) throws {
        stdoutPath = "\(scratch.path)/\(label).out"
        stderrPath = "\(scratch.path)/\(label).err"
        name = (executable as NSString).lastPathComponent
        self.arguments = arguments
        process = try Spawned(executable, arguments, stdout: stdoutPath, stderr: stderrPath)
    }

    var stdout: String { (try? String(contentsOfFile: stdoutPath, encoding: .utf8)) ?? "" }
    var stderr: String { (try? String(contentsOfFile: stderrPath, encoding: .utf8)) ?? "" }

    var isRunning: Bool {
        if exitStatus == nil { exitStatus = process.poll() }
        return exitStatus == nil
    }

    /// Waits until `stdout` holds a line matching `predicate`, for at most `seconds`.
    func waitForLine(seconds: Double = 15, _ predicate: (String) -> Bool) throws -> String {
        let deadline = Date().addingTimeInterval(seconds)
        while Date() < deadline {
            let running = isRunning
            var lines = stdout.split(separator: "\n", omittingEmptySubsequences: false).map(String.init)
            // What follows the last newline is a line still being written while the child runs:
            // a flood script's "CLOSED 19932 " was once taken before its " OPEN 0" arrived.
            if running { lines.removeLast() }
            if let line = lines.first(where: predicate) { return line }
            guard running else { throw HarnessError("\(name) exited: \(stderr)") }
            usleep(20_000)
        }
        throw HarnessError("no expected line from \(name) within \(seconds) s: \(stdout) \(stderr)")
    }

    func signal(_ signal: Int32) { kill(process.pid, signal) }

    deinit {
        if isRunning {
            kill(process.pid, SIGTERM)
            process.wait()
        }
    }
}

/// Where the built products are: next to this test bundle.
enum Products {
    static var directory: String {
        let executable = (try? FileManager.default.destinationOfSymbolicLink(atPath: "/proc/self/exe")) ?? CommandLine.arguments[0]
        var url = URL(fileURLWithPath: executable).deletingLastPathComponent()
        // On Linux the test runner is `<products>/scrolloffPackageTests.xctest`; on macOS it is inside a bundle.
        while !FileManager.default.fileExists(atPath: url.appendingPathComponent("scrolloff-dns").path), url.path != "/" {
            url = url.deletingLastPathComponent()
        }
        return url.path
    }

    static var scrolloffDNS: String { directory + "/scrolloff-dns" }
    static var scrolloff: String { directory + "/scrolloff" }
}

/// A port free for both UDP and TCP on 127.0.0.1 right now, for dnsmasq (which cannot pick one).
enum FreePort {
    static func pick() throws -> Int {
        for _ in 0..<50 {
            let udp = socket(AF_INET, Int32(SOCK_DGRAM.rawValue), 0)
            defer { close(udp) }
            var address = sockaddr_in()
            address.sin_family = sa_family_t(AF_INET)
            address.sin_addr.s_addr = inet_addr("127.0.0.1")
            address.sin_port = 0
            var length = socklen_t(MemoryLayout<sockaddr_in>.size)
            let bound = withUnsafeMutablePointer(to: &address) {
                $0.withMemoryRebound(to: sockaddr.self, capacity: 1) { pointer -> Bool in
                    bind(udp, pointer, length) == 0 && getsockname(udp, pointer, &length) == 0
                }
            }
            guard bound else { continue }
            let port = Int(UInt16(bigEndian: address.sin_port))
            let tcp = socket(AF_INET, Int32(SOCK_STREAM.rawValue), 0)
            defer { close(tcp) }
            var tcpAddress = address
            let tcpBound = withUnsafeMutablePointer(to: &tcpAddress) {
                $0.withMemoryRebound(to: sockaddr.self, capacity: 1) { bind(tcp, $0, socklen_t(MemoryLayout<sockaddr_in>.size)) == 0 }
            }
            if tcpBound { return port }
        }
        throw HarnessError("no free port found on 127.0.0.1")
    }
}

/// Runs a command to completion and returns its stdout and stderr.
@discardableResult
func run(_ executable: String, _ arguments: [String]) throws -> String {
    let path = NSTemporaryDirectory() + "scrolloff-e2e-run-" + UUID().uuidString
    defer { try? FileManager.default.removeItem(atPath: path) }
    let process = try Spawned(executable, arguments, stdout: path, stderr: path)
    process.wait()
    return (try? String(contentsOfFile: path, encoding: .utf8)) ?? ""
}

func dig(_ port: Int, _ arguments: [String]) throws -> String {
    try run("/usr/bin/dig", ["@127.0.0.1", "-p", "\(port)", "+time=5", "+tries=1"] + arguments)
}

func kdig(_ port: Int, _ arguments: [String]) throws -> String {
    try run("/usr/bin/kdig", ["@127.0.0.1", "-p", "\(port)", "+time=5", "+retry=0"] + arguments)
}

/// Runs a dnspython snippet; `PORT` in the script is the server's port. Prints whatever it prints.
func python(_ port: Int, _ script: String, scratch: Scratch) throws -> String {
    let path = try scratch.file("client-\(UUID().uuidString).py", "PORT = \(port)\n" + script)
    return try run("/usr/bin/python3", [path])
}

/// A network namespace with only its loopback up, for a test that needs addresses or ports of its
/// own. One left under the same name by a killed earlier run is removed first; call `remove()` in a
/// `defer`. Names should carry the test's pid (and case) so runs side by side do not meet.
struct LoopbackNamespace {
    let name: String

    /// `ip`'s arguments that run `command` inside it.
    func inside(_ command: [String]) -> [String] { ["netns", "exec", name] + command }

    init(_ name: String) throws {
        self.name = name
        _ = try runWithStatus("/usr/sbin/ip", ["netns", "del", name])
        try Self.ip(["netns", "add", name])
        do { try Self.ip(["-n", name, "link", "set", "lo", "up"]) } catch {
            remove()
            throw error
        }
    }

    /// `ip ARGUMENTS`, an error with its output when it fails.
    static func ip(_ arguments: [String]) throws {
        let outcome = try runWithStatus("/usr/sbin/ip", arguments)
        guard outcome.exitCode == 0 else { throw HarnessError("ip \(arguments.joined(separator: " ")): \(outcome)") }
    }

    func remove() { _ = try? runWithStatus("/usr/sbin/ip", ["netns", "del", name]) }
}
