import ControlAPI
import Foundation
import Logging
import ScrollOffCore
#if canImport(Glibc)
import Glibc
#endif

/// `[digest] command` (SPEC §7): a program run once per weekly digest written, to deliver it
/// (mail, a chat message, a desktop notification). Run directly, never through a shell, so nothing
/// in a profile's name or a digest's words is interpreted; the digest as JSON on standard input,
/// its sentences in `SCROLLOFF_DIGEST`, the profile in `SCROLLOFF_PROFILE`.
public struct DigestHookSettings: Hashable, Sendable {
    /// The program (an absolute path) and its arguments; empty = no hook (the default).
    public var command: [String] = []
    /// How long the program may run before it is stopped (SIGTERM to its process group, then
    /// SIGKILL 2 s later); the helper's stop ends it the same way.
    public var timeout: Span = .seconds(10)
    public init() {}
}

enum DigestHook {
    /// Runs the hook for one digest. A failure (cannot start, non-zero exit, time-out) is logged
    /// once as a warning and not retried: the digest itself is already in the events. `running`
    /// keeps it while it runs, so the helper's stop ends it (``RunningHooks/stopAll()``).
    static func deliver(_ report: StatsReport, settings: DigestHookSettings, logger: Logger,
                        running: RunningHooks = RunningHooks()) async {
        var environment: [String: String] = [:]
        environment["SCROLLOFF_PROFILE"] = report.profile
        environment["SCROLLOFF_WEEK_ENDING"] = report.lastDay
        environment["SCROLLOFF_DIGEST"] = report.summary.joined(separator: " ")
        var json = ControlJSON.encode(report)
        json.append(0x0A)
        await run(json: json, settings: settings, what: "digest hook", environment: environment,
                  metadata: ["profile": "\(report.profile)", "digest.command": "\(settings.command.first ?? "")"], logger: logger, running: running)
    }

    /// Runs a hook's program (`[digest]`, `[notify]`) once with `json` on its standard input and
    /// `environment` added; logs how it ended, with `what` naming the hook.
    static func run(json: Data, settings: DigestHookSettings, what: String, environment extra: [String: String],
                    metadata base: Logger.Metadata, logger: Logger, running: RunningHooks) async {
        guard let program = settings.command.first else { return }
        var environment = ["PATH": "/usr/local/bin:/usr/bin:/bin", "LANG": "C.UTF-8"]
        environment.merge(extra) { $1 }
        // The input goes in through an unlinked temporary file rather than a pipe: a hook that
        // exits without reading can then never stop the helper with SIGPIPE or block its write.
        var template = Array("/tmp/scrolloff-hook-XXXXXX".utf8CString)
        let fd = mkstemp(&template)
        guard fd >= 0 else {
            logger.warning("\(what) could not start: no temporary file (errno \(errno))", metadata: base)
            return
        }
        unlink(String(cString: template))
        // Only the hook gets it, as its standard input (`dup2` in the spawn clears the flag on fd 0).
        _ = fcntl(fd, F_SETFD, FD_CLOEXEC)
        let input = FileHandle(fileDescriptor: fd, closeOnDealloc: true)
        try? input.write(contentsOf: json)
        lseek(fd, 0, SEEK_SET)
        let metadata = base
        let hook: HookProcess
        do throws(HookSpawnError) {
            hook = try HookProcess.spawn(program, arguments: Array(settings.command.dropFirst()), environment: environment, input: fd)
        } catch {
            logger.warning("\(what) could not start", metadata: metadata.merging(["error": "\(error)"]) { $1 })
            return
        }
        try? input.close()
        if !running.add(hook) { hook.signal(SIGTERM) } // the helper is stopping
        defer { running.remove(hook) }
        // The watchdog runs on a Dispatch queue, not on Swift's cooperative pool, so a busy pool
        // cannot delay it; SIGKILL follows after the grace time for a hook that ignores SIGTERM.
        // `HookProcess.signal` checks the exit under its lock, so a reused pid is never signalled.
        DispatchQueue.global().asyncAfter(deadline: .now() + .milliseconds(Int(settings.timeout.milliseconds))) {
            guard hook.signal(SIGTERM) else { return }
            DispatchQueue.global().asyncAfter(deadline: .now() + .milliseconds(Int(RunningHooks.grace.milliseconds))) {
                hook.signal(SIGKILL)
            }
        }
        let ended = await hook.termination()
        if running.isStopping {
            logger.notice("\(what) ended by the helper's stop (\(ended))", metadata: metadata)
        } else if hook.wasSignalled {
            logger.warning("\(what) was stopped after \(SpanWords.describe(seconds: settings.timeout.milliseconds / 1000))",
                           metadata: metadata)
        } else if ended != .exited(0) {
            logger.warning("\(what) failed with \(ended)", metadata: metadata)
        } else {
            logger.info("\(what) ran", metadata: metadata)
        }
    }
}
