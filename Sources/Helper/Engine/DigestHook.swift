import ControlAPI
import Foundation
import Logging
import ScrollOffCore
import Synchronization
#if canImport(Glibc)
import Glibc
#endif

/// `[digest] command` (issue 16): a program run once per weekly digest written, to deliver it
/// (mail, a chat message, a desktop notification). Run directly, never through a shell, so nothing
/// in a profile's name or a digest's words is interpreted; the digest as JSON on standard input,
/// its sentences in `SCROLLOFF_DIGEST`, the profile in `SCROLLOFF_PROFILE`.
public struct DigestHookSettings: Hashable, Sendable {
    /// The program (an absolute path) and its arguments; empty = no hook (the default).
    public var command: [String] = []
    /// How long the program may run before it is stopped (SIGTERM, then SIGKILL 2 s later).
    public var timeout: Span = .seconds(10)
    public init() {}
}

enum DigestHook {
    /// Runs the hook for one digest. A failure (cannot start, non-zero exit, time-out) is logged
    /// once as a warning and not retried: the digest itself is already in the events.
    static func deliver(_ report: StatsReport, settings: DigestHookSettings, logger: Logger) async {
        guard let program = settings.command.first else { return }
        let process = Process()
        process.executableURL = URL(fileURLWithPath: program)
        process.arguments = Array(settings.command.dropFirst())
        var environment = ["PATH": "/usr/local/bin:/usr/bin:/bin", "LANG": "C.UTF-8"]
        environment["SCROLLOFF_PROFILE"] = report.profile
        environment["SCROLLOFF_WEEK_ENDING"] = report.lastDay
        environment["SCROLLOFF_DIGEST"] = report.summary.joined(separator: " ")
        process.environment = environment
        // The digest goes in through an unlinked temporary file rather than a pipe: a hook that
        // exits without reading can then never stop the helper with SIGPIPE or block its write.
        var json = ControlJSON.encode(report)
        json.append(0x0A)
        var template = Array("/tmp/scrolloff-digest-XXXXXX".utf8CString)
        let fd = mkstemp(&template)
        guard fd >= 0 else {
            logger.warning("digest hook could not start: no temporary file (errno \(errno))", metadata: ["profile": "\(report.profile)"])
            return
        }
        unlink(String(cString: template))
        let input = FileHandle(fileDescriptor: fd, closeOnDealloc: true)
        try? input.write(contentsOf: json)
        lseek(fd, 0, SEEK_SET)
        process.standardInput = input
        process.standardOutput = FileHandle.nullDevice
        process.standardError = FileHandle.nullDevice
        let metadata: Logger.Metadata = ["profile": "\(report.profile)", "digest.command": "\(program)"]
        let exited = AsyncStream<Int32>.makeStream()
        let stopped = StoppedFlag()
        process.terminationHandler = { p in
            stopped.exited()
            exited.continuation.yield(p.terminationStatus)
            exited.continuation.finish()
        }
        do { try process.run() } catch {
            logger.warning("digest hook could not start", metadata: metadata.merging(["error": "\(error)"]) { $1 })
            return
        }
        try? input.close()
        let pid = process.processIdentifier
        // The watchdog runs on a Dispatch queue, not on Swift's cooperative pool, so a busy pool
        // cannot delay it; SIGKILL follows 2 s later for a hook that ignores SIGTERM. `exited`
        // is checked under the same lock, so a reused pid is never signalled.
        DispatchQueue.global().asyncAfter(deadline: .now() + .milliseconds(Int(settings.timeout.milliseconds))) {
            guard stopped.stop(pid, SIGTERM) else { return }
            DispatchQueue.global().asyncAfter(deadline: .now() + .seconds(2)) { _ = stopped.stop(pid, SIGKILL) }
        }
        var status: Int32 = -1
        for await s in exited.stream { status = s }
        let timedOut = stopped.value
        if timedOut {
            logger.warning("digest hook was stopped after \(SpanWords.describe(seconds: settings.timeout.milliseconds / 1000))",
                           metadata: metadata)
        } else if status != 0 {
            logger.warning("digest hook failed with exit status \(status)", metadata: metadata)
        } else {
            logger.info("digest delivered by the hook", metadata: metadata)
        }
    }
}

/// Whether the watchdog stopped the hook, and whether it has exited (then it is never signalled).
private final class StoppedFlag: Sendable {
    private let state = Mutex((stopped: false, exited: false))

    /// Sends `signal` unless the hook has exited; returns whether it was sent.
    func stop(_ pid: Int32, _ signal: Int32) -> Bool {
        state.withLock { s in
            guard !s.exited else { return false }
            s.stopped = true
            kill(pid, signal)
            return true
        }
    }

    /// Called once the hook's exit was seen.
    func exited() { state.withLock { $0.exited = true } }
    var value: Bool { state.withLock { $0.stopped } }
}

extension HelperEngine {
    /// Hands each digest written now to the hook, off the engine's actor.
    func deliverDigests(_ written: [(profile: String, report: StatsReport)]) {
        let settings = digestHook
        guard !settings.command.isEmpty else { return }
        let logger = self.logger
        for w in written { Task.detached { await DigestHook.deliver(w.report, settings: settings, logger: logger) } }
    }

    /// `[digest]` from the configuration, at start and on reload.
    public func setDigestHook(_ settings: DigestHookSettings) { digestHook = settings }
}
