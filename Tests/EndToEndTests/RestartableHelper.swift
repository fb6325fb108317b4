import Foundation
import TestSupport
import Testing

/// How the helper's clocks are faked with libfaketime (Debian `faketime`), passed as environment.
///
/// libfaketime intercepts `clock_gettime` in the helper process. By default it fakes
/// `CLOCK_REALTIME` *and* `CLOCK_MONOTONIC`/`CLOCK_BOOTTIME` alike; the helper's trusted clock
/// (SPEC §11) compares the wall clock against `CLOCK_BOOTTIME`, so which clocks are faked decides
/// what the test simulates:
/// - ``allClocks(startingAt:)``: every clock starts at the given time and ticks. Across a restart
///   with a later start the boot clock moves forward as much as the wall clock, which is what time
///   really passing looks like to the helper.
/// - ``wallOnly(timestampFile:)``: `FAKETIME_DONT_FAKE_MONOTONIC=1` keeps the real boot clock, so
///   only the system clock moves: what a person setting the clock looks like. The offset is read
///   from a file, again at most a second after the last read (`FAKETIME_CACHE_DURATION=1`), so a
///   test can move it while the helper runs and waits ``fileTakesEffect`` for the change to show.
///   Not `FAKETIME_NO_CACHE=1`: it re-parses the file in every call into state shared by all
///   threads, and with several threads reading the clock a few readings in a million come back as
///   the real time (measured: 5–7 of 800,000 with four threads), which the trusted clock rightly
///   takes as the clock moving back and forth — extra tamper events no real clock would give.
///
/// Without `FAKETIME_SHARED`, libfaketime's constructor creates a shared-memory segment and calls
/// `setenv`, which moves `environ` before the Swift runtime locates `argv` through it
/// (swiftlang/swift#76080): the helper then sees no arguments at all and prints its usage. A name
/// that does not exist makes libfaketime skip the segment (it only reports it as non-fatal).
enum FakeClock {
    static let library = "/usr/lib/x86_64-linux-gnu/faketime/libfaketime.so.1"
    static let noSharedMemory = ["FAKETIME_SHARED": "/scrolloff-e2e-none /scrolloff-e2e-none"]

    /// `at` in libfaketime's `YYYY-MM-DD hh:mm:ss` form, local time (the helper runs with TZ=UTC).
    static func allClocks(startingAt at: String) -> [String: String] {
        // "@" makes the clock start there and tick, rather than stand still.
        noSharedMemory.merging(["LD_PRELOAD": library, "FAKETIME": "@" + at]) { $1 }
    }

    static func wallOnly(timestampFile: String) -> [String: String] {
        noSharedMemory.merging(["LD_PRELOAD": library, "FAKETIME_TIMESTAMP_FILE": timestampFile, "FAKETIME_CACHE_DURATION": "1",
                                "FAKETIME_DONT_FAKE_MONOTONIC": "1"]) { $1 }
    }

    /// How long after a change to the timestamp file a ``wallOnly(timestampFile:)`` helper is sure to see it.
    static let fileTakesEffect: TimeInterval = 1.2

    /// The wall clock `at` in Unix seconds, for `at` in UTC.
    static func seconds(_ at: String) -> Int {
        let formatter = DateFormatter()
        formatter.locale = Locale(identifier: "en_US_POSIX")
        formatter.timeZone = TimeZone(identifier: "UTC")
        formatter.dateFormat = "yyyy-MM-dd HH:mm:ss"
        return Int(formatter.date(from: at)?.timeIntervalSince1970 ?? 0)
    }
}

/// A `scrolloff-dns start` whose state directory and control socket outlive it, so a test can stop,
/// kill and restart it on the same state (``Sinkhole`` makes fresh ones per instance).
final class RestartableHelper: @unchecked Sendable {
    let stateDirectory: String
    let controlSocket: String
    let upstream: Int
    let scratch: Scratch
    /// More arguments for `start` at every start, such as `--config FILE`.
    let arguments: [String]
    /// Who runs the helper (SPEC §9: as people run it); the CLI runs as the same user, since it
    /// trusts no socket served by anyone but root and itself (SPEC §11).
    let mode: PrivilegeMode
    private(set) var child: Child
    private(set) var port: Int
    private var starts = 0

    init(scratch: Scratch, upstream: Int, environment: [String: String] = [:], arguments: [String] = [], mode: PrivilegeMode = .root) throws {
        self.scratch = scratch
        self.upstream = upstream
        self.arguments = arguments
        self.mode = mode
        (stateDirectory, controlSocket) = try Self.folders(scratch: scratch, mode: mode)
        (child, port) = try Self.start(scratch: scratch, stateDirectory: stateDirectory, controlSocket: controlSocket,
                                       upstream: upstream, environment: environment, arguments: arguments, mode: mode, label: "helper-0")
        starts = 1
    }

    /// Where the helper of `mode` keeps its state and control socket: in the scratch folder, or
    /// for an ordinary user in a folder of its own there (the scratch folder is root's).
    static func folders(scratch: Scratch, mode: PrivilegeMode) throws -> (state: String, socket: String) {
        guard mode == .ordinaryUser else { return ("\(scratch.path)/state", "\(scratch.path)/control.sock") }
        let folder = try mode.privateFolder(in: scratch, name: "user")
        return ("\(folder)/state", "\(folder)/control.sock")
    }

    var database: String { "\(stateDirectory)/scrolloff.sqlite" }

    /// Stops the running helper with `signal` (and reaps it), then starts a new one on the same state.
    func restart(signal: Int32 = SIGTERM, environment: [String: String] = [:]) throws {
        stop(signal: signal)
        (child, port) = try Self.start(scratch: scratch, stateDirectory: stateDirectory, controlSocket: controlSocket,
                                       upstream: upstream, environment: environment, arguments: arguments, mode: mode, label: "helper-\(starts)")
        starts += 1
    }

    func stop(signal: Int32 = SIGTERM) {
        guard child.isRunning else { return }
        child.signal(signal)
        child.process.wait()
    }

    /// Runs the CLI against this helper's control socket, as the helper's user.
    func cli(_ arguments: [String]) throws -> Outcome {
        try runWithStatus(cliCommand.executable, cliCommand.prefix + arguments + ["--socket", controlSocket])
    }

    /// The CLI as the helper's user: `setpriv` in front for an ordinary user's helper (when the tests run as root).
    var cliCommand: (executable: String, prefix: [String]) {
        guard mode == .ordinaryUser, geteuid() == 0 else { return (Products.scrolloff, []) }
        return ("/usr/bin/setpriv", ["--reuid=\(PrivilegeMode.ordinaryUID)", "--regid=\(PrivilegeMode.ordinaryGID)", "--clear-groups",
                                     Products.scrolloff])
    }

    private static func start(scratch: Scratch, stateDirectory: String, controlSocket: String, upstream: Int,
                              environment: [String: String], arguments extra: [String], mode: PrivilegeMode, label: String) throws -> (Child, Int) {
        // Through `/usr/bin/env` always (HelperLaunch.environment): the pid the test signals is the
        // helper's own (`setpriv` execs it in place). TZ is fixed so "Monday 22:45" is the same
        // local time on every machine.
        let launch = HelperLaunch(
            executable: Products.scrolloffDNS, upstreams: [HelperLaunch.loopback(upstream)], stateDirectory: stateDirectory,
            controlSocket: controlSocket, extra: extra, environment: ["TZ": "UTC"].merging(environment) { $1 })
        let child = try mode.applied(to: launch).spawn(scratch: scratch, label: label)
        let port = try child.listeningPort()
        try child.waitForControlSocket()
        mode.check(child.process.pid)
        return (child, port)
    }
}

/// A finished command: its exit code and its stdout and stderr together.
struct Outcome: CustomStringConvertible {
    let exitCode: Int32
    let output: String
    var description: String { "exit \(exitCode): \(output)" }
}

/// Like ``run(_:_:)`` but keeps the exit code, for refusals (exit 1, SPEC §13).
func runWithStatus(_ executable: String, _ arguments: [String]) throws -> Outcome {
    let path = NSTemporaryDirectory() + "scrolloff-e2e-run-" + UUID().uuidString
    defer { try? FileManager.default.removeItem(atPath: path) }
    let process = try Spawned(executable, arguments, stdout: path, stderr: path)
    let status = process.wait()
    // WIFEXITED / WEXITSTATUS by hand: the C macros are not imported into Swift.
    let code = (status & 0x7f) == 0 ? (status >> 8) & 0xff : -1
    return Outcome(exitCode: code, output: (try? String(contentsOfFile: path, encoding: .utf8)) ?? "")
}

/// Read-only questions to the helper's SQLite file through the `sqlite3` CLI.
func sqlite(_ database: String, _ query: String) throws -> String {
    let outcome = try runWithStatus("/usr/bin/sqlite3", ["-readonly", database, query])
    guard outcome.exitCode == 0 else { throw HarnessError("sqlite3 \(query) failed: \(outcome)") }
    return outcome.output.trimmingCharacters(in: .whitespacesAndNewlines)
}

/// The A address in a `dig +short` answer, or the whole answer when there is none.
func shortA(_ port: Int, _ name: String) throws -> String {
    try dig(port, ["+short", name, "A"]).trimmingCharacters(in: .whitespacesAndNewlines)
}

/// A JSON object printed by `--json`.
func jsonObject(_ text: String) throws -> [String: Any] {
    try #require(try JSONSerialization.jsonObject(with: Data(text.utf8)) as? [String: Any], "not a JSON object: \(text)")
}
