#if canImport(Glibc)
import ControlServer
import Glibc
#endif
import ControlAPI
import Foundation
import Helper
import ListFetch
import Logging
import NIOCore
import ScrollOffCore
import Synchronization
import Testing
import TestSupport

/// One serialized parent for every suite here: they start processes and servers, and this
/// machine has two cores shared with other builds.
@Suite(.serialized) struct ControlEndToEnd {}

/// A fresh folder under /tmp with a short path (Unix socket paths are limited to 107 bytes).
func makeTemporaryDirectory(mode: mode_t = 0o700) throws -> String {
    var template = Array("/tmp/soc-XXXXXX".utf8CString)
    guard let made = mkdtemp(&template) else { throw POSIXFailure(operation: "mkdtemp", code: errno) }
    let path = String(cString: made)
    chmod(path, mode)
    return path
}

struct POSIXFailure: Error, CustomStringConvertible {
    var operation: String
    var code: Int32
    var description: String { "\(operation) failed: errno \(code)" }
}

func wallClock() -> Instant {
    Instant(millisecondsSince1970: Int64(Date().timeIntervalSince1970 * 1000))
}

/// The real control server with the real list controller, on a socket in a temp folder.
final class RunningServer: Sendable {
    let directory: String
    let socketPath: String
    let lists: ListsController
    let bound: BoundControlServer
    private let serving: Task<Void, any Error>

    init(
        socketMode: mode_t = 0o660, directoryMode: mode_t = 0o700, fetchPolicy: FetchPolicy = FetchPolicy(attempts: 1),
        idleTimeout: TimeAmount = .seconds(30)
    ) async throws {
        directory = try makeTemporaryDirectory(mode: directoryMode)
        socketPath = directory + "/ctl.sock"
        var logger = Logger(label: "control-test")
        logger.logLevel = .critical
        lists = ListsController(
            stateDirectory: directory + "/state", configuration: ListsConfiguration(fetchPolicy: fetchPolicy),
            clock: wallClock, logger: logger
        )
        let router = ControlRoutes.router(context: ControlContext(version: "test", lists: lists, clock: wallClock), logger: logger)
        let server = ControlServer(
            configuration: ControlServerConfiguration(socket: ControlSocketFile(path: socketPath, mode: socketMode), idleTimeout: idleTimeout),
            router: router, logger: logger
        )
        bound = try await server.bind()
        let bound = self.bound
        serving = Task { try await bound.serve() }
    }

    func stop() async {
        await bound.close()
        _ = try? await serving.value
        try? FileManager.default.removeItem(atPath: directory)
    }
}

/// What a finished process printed and how it ended.
struct ProcessResult: CustomStringConvertible {
    var status: Int32
    var stdout: String
    var stderr: String
    var description: String { "exit \(status)\nstdout: \(stdout)\nstderr: \(stderr)" }
}

/// Runs a program to completion without blocking a cooperative thread (the server under test
/// answers on those threads, and this machine has only two).
func run(_ executable: String, _ arguments: [String], environment: [String: String]? = nil) async throws -> ProcessResult {
    let outPath = NSTemporaryDirectory() + "/soc-out-\(UUID().uuidString)"
    let errPath = NSTemporaryDirectory() + "/soc-err-\(UUID().uuidString)"
    _ = FileManager.default.createFile(atPath: outPath, contents: nil)
    _ = FileManager.default.createFile(atPath: errPath, contents: nil)
    defer {
        try? FileManager.default.removeItem(atPath: outPath)
        try? FileManager.default.removeItem(atPath: errPath)
    }
    let process = Process()
    process.executableURL = URL(fileURLWithPath: executable)
    process.arguments = arguments
    if let environment { process.environment = environment }
    process.standardInput = FileHandle.nullDevice
    process.standardOutput = try FileHandle(forWritingTo: URL(fileURLWithPath: outPath))
    process.standardError = try FileHandle(forWritingTo: URL(fileURLWithPath: errPath))
    let status: Int32 = try await withCheckedThrowingContinuation { continuation in
        process.terminationHandler = { finished in continuation.resume(returning: finished.terminationStatus) }
        do {
            try process.run()
        } catch {
            process.terminationHandler = nil
            continuation.resume(throwing: error)
        }
    }
    return ProcessResult(
        status: status,
        stdout: (try? String(contentsOfFile: outPath, encoding: .utf8)) ?? "",
        stderr: (try? String(contentsOfFile: errPath, encoding: .utf8)) ?? ""
    )
}

/// The `scrolloff` binary built next to this test bundle.
let scrolloffBinary: String = {
    let exe = (try? FileManager.default.destinationOfSymbolicLink(atPath: "/proc/self/exe")) ?? CommandLine.arguments[0]
    var directory = URL(fileURLWithPath: exe).deletingLastPathComponent()
    // On Linux the bundle is `<bin>/scrolloffPackageTests.xctest`, a plain executable in <bin>.
    if directory.lastPathComponent.hasSuffix(".xctest") { directory.deleteLastPathComponent() }
    return directory.appendingPathComponent("scrolloff").path
}()

/// Runs the CLI against `socket` with a clean environment (no colours, no inherited socket).
func cli(_ arguments: [String], socket: String?, extraEnvironment: [String: String] = [:]) async throws -> ProcessResult {
    var environment = ["PATH": "/usr/bin:/bin", "HOME": "/tmp", "NO_COLOR": "1"]
    environment.merge(extraEnvironment) { $1 }
    let socketArguments = socket.map { ["--socket", $0] } ?? []
    return try await run(scrolloffBinary, arguments + socketArguments, environment: environment)
}

/// `curl --unix-socket` against the server; returns the status code and the body.
func curl(_ socket: String, _ method: String, _ path: String, body: String? = nil, headers: [String] = [], asUser: UInt32? = nil) async throws -> (status: Int, body: String, headers: String) {
    let headerFile = NSTemporaryDirectory() + "/soc-h-\(UUID().uuidString)"
    defer { try? FileManager.default.removeItem(atPath: headerFile) }
    var arguments = ["-s", "-S", "--max-time", "20", "--unix-socket", socket, "-X", method, "-D", headerFile, "-o", "-", "-w", "\n%{http_code}"]
    for header in headers { arguments += ["-H", header] }
    if let body { arguments += ["-H", "Content-Type: application/json", "--data-binary", body] }
    arguments.append("http://localhost\(path)")
    let result: ProcessResult
    if let asUser {
        _ = FileManager.default.createFile(atPath: headerFile, contents: nil)
        chmod(headerFile, 0o666)
        result = try await run("/usr/bin/setpriv", ["--reuid=\(asUser)", "--regid=\(asUser)", "--clear-groups", "/usr/bin/curl"] + arguments)
    } else {
        result = try await run("/usr/bin/curl", arguments)
    }
    let lines = result.stdout.split(separator: "\n", omittingEmptySubsequences: false)
    let status = Int(lines.last ?? "") ?? -1
    let body = lines.dropLast().joined(separator: "\n")
    return (status, body, (try? String(contentsOfFile: headerFile, encoding: .utf8)) ?? "")
}

/// Runs blocking work on its own thread, so it never holds one of the few cooperative threads
/// the server under test needs to answer (`onOwnThread`: in this task, so expectations in it count).
func offPool<T: Sendable>(_ work: @escaping @Sendable () throws -> T) async throws -> T {
    try await onOwnThread { () throws -> T in try work() }
}

/// Sends raw bytes on the socket and reads the answer until the server closes (or 5 s pass).
func rawExchange(_ socket: String, _ bytes: [UInt8]) async throws -> String {
    try await offPool { try rawExchangeBlocking(socket, bytes) }
}

private func rawExchangeBlocking(_ socket: String, _ bytes: [UInt8]) throws -> String {
    var address = sockaddr_un()
    address.sun_family = sa_family_t(AF_UNIX)
    let path = Array(socket.utf8)
    withUnsafeMutableBytes(of: &address.sun_path) { raw in
        raw.copyBytes(from: path)
        raw[path.count] = 0
    }
    let fd = Glibc.socket(AF_UNIX, Int32(SOCK_STREAM.rawValue), 0)
    guard fd >= 0 else { throw POSIXFailure(operation: "socket", code: errno) }
    defer { close(fd) }
    var timeout = timeval(tv_sec: 5, tv_usec: 0)
    setsockopt(fd, SOL_SOCKET, SO_RCVTIMEO, &timeout, socklen_t(MemoryLayout<timeval>.size))
    let connected = withUnsafePointer(to: &address) {
        $0.withMemoryRebound(to: sockaddr.self, capacity: 1) { connect(fd, $0, socklen_t(MemoryLayout<sockaddr_un>.size)) }
    }
    guard connected == 0 else { throw POSIXFailure(operation: "connect", code: errno) }
    _ = bytes.withUnsafeBytes { send(fd, $0.baseAddress, $0.count, Int32(MSG_NOSIGNAL)) }
    var answer: [UInt8] = []
    var chunk = [UInt8](repeating: 0, count: 4096)
    while true {
        let got = chunk.withUnsafeMutableBytes { recv(fd, $0.baseAddress, 4096, 0) }
        if got <= 0 { break }
        answer += chunk[0..<got]
    }
    return String(decoding: answer, as: UTF8.self)
}

/// A python `http.server` serving `directory` on 127.0.0.1 at a free port.
final class ListHTTPServer: @unchecked Sendable {
    let directory: String
    let port: Int
    private let process: Process

    static func start(directory: String) async throws -> ListHTTPServer {
        try await offPool { try ListHTTPServer(directory: directory) }
    }

    private init(directory: String) throws {
        self.directory = directory
        let script = """
        import functools, http.server, sys
        handler = functools.partial(http.server.SimpleHTTPRequestHandler, directory=sys.argv[1])
        handler.func.log_message = lambda *args: None
        server = http.server.ThreadingHTTPServer(("127.0.0.1", 0), handler)
        print(server.server_address[1], flush=True)
        server.serve_forever()
        """
        let process = Process()
        process.executableURL = URL(fileURLWithPath: "/usr/bin/python3")
        process.arguments = ["-u", "-c", script, directory]
        let pipe = Pipe()
        process.standardOutput = pipe
        process.standardError = FileHandle.nullDevice
        try process.run()
        self.process = process
        // One short line, printed within a fraction of a second of starting.
        var line: [UInt8] = []
        while true {
            let byte = pipe.fileHandleForReading.readData(ofLength: 1)
            if byte.isEmpty || byte.first == 0x0A { break }
            line += byte
        }
        guard let port = Int(String(decoding: line, as: UTF8.self)) else {
            process.terminate()
            throw POSIXFailure(operation: "start python http.server", code: 0)
        }
        self.port = port
    }

    func url(_ file: String) -> String { "http://127.0.0.1:\(port)/\(file)" }

    /// SIGKILL: a child started from a test's thread inherits its blocked signals, SIGTERM among
    /// them (seen: `SigBlk: fffffffe3bfbea27`), so `terminate()` left the server running.
    func stop() {
        kill(process.processIdentifier, SIGKILL)
    }
}

/// A clock and sleeper the test moves by hand: `sleep(until:)` returns only when `advance(to:)`
/// reaches the deadline, so the refresh service runs its real code at a planned instant.
final class ManualTimer: RefreshTimer {
    private struct Sleeper {
        var id: Int
        var deadline: Instant
        var continuation: CheckedContinuation<Void, any Error>
    }

    private struct State {
        var now: Instant
        var sleepers: [Sleeper] = []
        var nextID = 0
        var sleepCalls: [Instant] = []
    }

    private let state: Mutex<State>

    init(now: Instant) { state = Mutex(State(now: now)) }

    func now() -> Instant { state.withLock { $0.now } }

    /// Deadlines of every `sleep(until:)` call so far, oldest first.
    var sleepCalls: [Instant] { state.withLock { $0.sleepCalls } }
    /// Deadlines the service is waiting for right now.
    var pendingDeadlines: [Instant] { state.withLock { $0.sleepers.map(\.deadline) } }

    func sleep(until deadline: Instant) async throws {
        let id = state.withLock { state -> Int in
            state.nextID += 1
            state.sleepCalls.append(deadline)
            return state.nextID
        }
        try await withTaskCancellationHandler {
            try await withCheckedThrowingContinuation { (continuation: CheckedContinuation<Void, any Error>) in
                let resumeNow = state.withLock { state -> Bool in
                    if deadline <= state.now || Task.isCancelled { return true }
                    state.sleepers.append(Sleeper(id: id, deadline: deadline, continuation: continuation))
                    return false
                }
                if resumeNow { continuation.resume() }
            }
        } onCancel: {
            let cancelled = state.withLock { state -> Sleeper? in
                guard let index = state.sleepers.firstIndex(where: { $0.id == id }) else { return nil }
                return state.sleepers.remove(at: index)
            }
            cancelled?.continuation.resume(throwing: CancellationError())
        }
    }

    func advance(to instant: Instant) {
        let due = state.withLock { state -> [Sleeper] in
            state.now = instant
            let due = state.sleepers.filter { $0.deadline <= instant }
            state.sleepers.removeAll { $0.deadline <= instant }
            return due
        }
        for sleeper in due { sleeper.continuation.resume() }
    }
}

/// Waits (polling every 20 ms, at most `seconds`) until `condition` holds.
func eventually(within seconds: Double = 10, _ condition: () async throws -> Bool) async rethrows -> Bool {
    let deadline = ContinuousClock.now + .milliseconds(Int64(seconds * 1000))
    while ContinuousClock.now < deadline {
        if try await condition() { return true }
        try? await Task.sleep(for: .milliseconds(20))
    }
    return try await condition()
}

/// Writes a list file with `count` names `n<i>.example.com`.
/// The modification time the next written list gets; see `writeList`.
private let nextListDate = Mutex(Date())

func writeList(_ path: String, names count: Int, prefix: String = "n") throws {
    var text = "# test list\n"
    for index in 0..<count { text += "\(prefix)\(index).example.com\n" }
    try text.write(toFile: path, atomically: true, encoding: .utf8)
    // HTTP dates have one-second resolution: a list rewritten within the same second (or deleted and
    // written again) would look unchanged to a conditional GET (If-Modified-Since). So every written
    // list is dated at least 2 s after the one written before it.
    let date = nextListDate.withLock { next -> Date in
        let date = max(Date(), next)
        next = date.addingTimeInterval(2)
        return date
    }
    try FileManager.default.setAttributes([.modificationDate: date], ofItemAtPath: path)
}

func decode<T: Decodable>(_ type: T.Type, _ text: String) throws -> T {
    try ControlJSON.decoder().decode(type, from: Data(text.utf8))
}
