import Foundation
import ScrollOffCore
import Synchronization
#if canImport(Glibc)
import Glibc
#endif

/// A hook program (`[digest] command`) started as a fresh process would be, not as a copy of the helper.
///
/// A signal the helper ignores stays ignored across `exec`, and the helper ignores several: SIGPIPE
/// for its sockets, and SIGTERM, SIGINT, SIGHUP and SIGUSR2 for a moment while swift-service-lifecycle
/// sets up their Dispatch sources. Hooks started with Foundation's `Process` were measured running
/// with SIGPIPE and SIGQUIT ignored (`SigIgn` in /proc), and a `sh` hook cannot even `trap` a signal
/// ignored on entry (POSIX). So the spawn resets every signal to its default and clears the mask
/// (`POSIX_SPAWN_SETSIGDEF`, `POSIX_SPAWN_SETSIGMASK`), gives the hook its own process group, so a
/// signal reaches what it started too (`sleep` under `sh`, which outlived a SIGTERM to `sh` alone),
/// and closes every descriptor above standard error, so a hook never holds the helper's sockets open
/// after the helper stopped. ``RunningHooks`` then makes the helper's stop end every running hook:
/// before, a stop left them running.
final class HookProcess: Sendable {
    let pid: pid_t

    /// How a hook ended.
    enum Termination: Equatable, Sendable, CustomStringConvertible {
        case exited(Int32)
        case signalled(Int32)

        var description: String {
            switch self {
            case .exited(let status): "exit status \(status)"
            case .signalled(SIGTERM): "SIGTERM"
            case .signalled(SIGKILL): "SIGKILL"
            case .signalled(let signal): "signal \(signal)"
            }
        }
    }

    private struct State {
        var exited = false
        var termination: Termination?
        var signalled = false
        var waiters: [CheckedContinuation<Termination, Never>] = []
    }

    private let state = Mutex(State())

    private init(pid: pid_t) { self.pid = pid }

    /// Starts `program` with `arguments` and exactly `environment`; `input` becomes its standard
    /// input, standard output and error go to /dev/null.
    /// - Throws: the `errno` of a failed spawn (no such program, not executable).
    static func spawn(_ program: String, arguments: [String], environment: [String: String], input: Int32) throws(HookSpawnError) -> HookProcess {
        var attributes = posix_spawnattr_t()
        posix_spawnattr_init(&attributes)
        defer { posix_spawnattr_destroy(&attributes) }
        var defaults = sigset_t()
        sigfillset(&defaults)
        sigdelset(&defaults, SIGKILL)
        sigdelset(&defaults, SIGSTOP)
        posix_spawnattr_setsigdefault(&attributes, &defaults)
        var mask = sigset_t()
        sigemptyset(&mask)
        posix_spawnattr_setsigmask(&attributes, &mask)
        posix_spawnattr_setpgroup(&attributes, 0)
        posix_spawnattr_setflags(&attributes, Int16(POSIX_SPAWN_SETSIGDEF | POSIX_SPAWN_SETSIGMASK | POSIX_SPAWN_SETPGROUP))

        var actions = posix_spawn_file_actions_t()
        posix_spawn_file_actions_init(&actions)
        defer { posix_spawn_file_actions_destroy(&actions) }
        posix_spawn_file_actions_adddup2(&actions, input, 0)
        posix_spawn_file_actions_addopen(&actions, 1, "/dev/null", O_WRONLY, 0)
        posix_spawn_file_actions_addopen(&actions, 2, "/dev/null", O_WRONLY, 0)
        closeDescriptorsAboveStandardError(&actions)

        let argv = ([program] + arguments).map { strdup($0) } + [nil]
        let envp = environment.sorted { $0.key < $1.key }.map { strdup("\($0.key)=\($0.value)") } + [nil]
        defer {
            for p in argv { free(p) }
            for p in envp { free(p) }
        }
        var pid: pid_t = 0
        let result = posix_spawn(&pid, program, &actions, &attributes, argv, envp)
        guard result == 0 else { throw HookSpawnError(errno: result) }
        let hook = HookProcess(pid: pid)
        // A thread of its own blocks in `waitid` (a hook may run minutes; the cooperative pool must not wait).
        let thread = Thread { hook.reap() }
        thread.name = "hook-\(pid)"
        thread.start()
        return hook
    }

    /// `posix_spawn_file_actions_addclosefrom_np` (glibc 2.34) is not in Swift's Glibc module, so it is
    /// looked up; without it every descriptor open now above 2 gets a close action.
    private static func closeDescriptorsAboveStandardError(_ actions: inout posix_spawn_file_actions_t) {
        typealias CloseFrom = @convention(c) (UnsafeMutablePointer<posix_spawn_file_actions_t>, Int32) -> Int32
        if let symbol = dlsym(UnsafeMutableRawPointer(bitPattern: 0), "posix_spawn_file_actions_addclosefrom_np") {
            let closeFrom = unsafeBitCast(symbol, to: CloseFrom.self)
            if closeFrom(&actions, 3) == 0 { return }
        }
        let open = (try? FileManager.default.contentsOfDirectory(atPath: "/proc/self/fd")) ?? []
        for fd in open.compactMap({ Int32($0) }) where fd > 2 { posix_spawn_file_actions_addclose(&actions, fd) }
    }

    /// Waits for the exit without reaping first (`WNOWAIT`): until `exited` is set under the lock the
    /// pid stays a zombie and cannot be reused, so `signal` never reaches another process.
    private func reap() {
        var info = siginfo_t()
        while waitid(P_PID, id_t(pid), &info, WEXITED | WNOWAIT) != 0, errno == EINTR {}
        state.withLock { $0.exited = true }
        var raw: Int32 = 0
        while waitpid(pid, &raw, 0) < 0, errno == EINTR {}
        // WIFEXITED / WEXITSTATUS / WTERMSIG by hand: the C macros are not imported.
        let termination: Termination = (raw & 0x7f) == 0 ? .exited((raw >> 8) & 0xff) : .signalled(raw & 0x7f)
        let waiters = state.withLock { s -> [CheckedContinuation<Termination, Never>] in
            s.termination = termination
            defer { s.waiters = [] }
            return s.waiters
        }
        for w in waiters { w.resume(returning: termination) }
    }

    /// Sends `signal` to the hook's process group unless the hook has exited; returns whether it was sent.
    @discardableResult
    func signal(_ signal: Int32) -> Bool {
        state.withLock { s in
            guard !s.exited else { return false }
            s.signalled = true
            kill(-pid, signal)
            return true
        }
    }

    var hasExited: Bool { state.withLock { $0.exited } }
    /// Whether `signal` was ever sent (the time-out or the helper's stop ended it).
    var wasSignalled: Bool { state.withLock { $0.signalled } }

    /// How it ended, once it has.
    func termination() async -> Termination {
        await withCheckedContinuation { (c: CheckedContinuation<Termination, Never>) in
            let done: Termination? = state.withLock { s in
                if let t = s.termination { return t }
                s.waiters.append(c)
                return nil
            }
            if let done { c.resume(returning: done) }
        }
    }
}

struct HookSpawnError: Error, CustomStringConvertible {
    var errno: Int32
    var description: String { String(cString: strerror(errno)) }
}

/// The hooks running now, so a stop of the helper ends them: none outlives it. SIGTERM to each
/// hook's process group first; SIGKILL only to those still running after ``grace``.
final class RunningHooks: Sendable {
    /// How long a hook has to end after SIGTERM, at its time-out and at the helper's stop.
    static let grace = Span.seconds(2)

    private struct State {
        var hooks: [pid_t: HookProcess] = [:]
        var closed = false
        var whenEmpty: [CheckedContinuation<Void, Never>] = []
    }

    private let state = Mutex(State())

    init() {}

    /// Whether the helper is stopping (``stopAll()`` has begun).
    var isStopping: Bool { state.withLock { $0.closed } }

    /// Keeps `hook` until it exits; false once the helper is stopping (then the caller stops it).
    func add(_ hook: HookProcess) -> Bool {
        state.withLock { s in
            guard !s.closed else { return false }
            s.hooks[hook.pid] = hook
            return true
        }
    }

    /// Called by the delivery once the hook's end is logged.
    func remove(_ hook: HookProcess) {
        let waiters = state.withLock { s -> [CheckedContinuation<Void, Never>] in
            s.hooks.removeValue(forKey: hook.pid)
            guard s.hooks.isEmpty else { return [] }
            defer { s.whenEmpty = [] }
            return s.whenEmpty
        }
        for w in waiters { w.resume() }
    }

    var count: Int { state.withLock { $0.hooks.count } }

    /// The helper's stop: SIGTERM to every running hook, SIGKILL after ``grace`` to the ones still
    /// running; returns when every delivery has logged how its hook ended. No hook starts after this.
    /// No `Task.sleep`: the stopping service's task is cancelled, and a cancelled sleep does not wait.
    func stopAll() async {
        let hooks = state.withLock { s in
            s.closed = true
            return Array(s.hooks.values)
        }
        guard !hooks.isEmpty else { return }
        for h in hooks { h.signal(SIGTERM) }
        // `signal` does nothing to a hook that has exited.
        DispatchQueue.global().asyncAfter(deadline: .now() + .milliseconds(Int(Self.grace.milliseconds))) {
            for h in hooks { h.signal(SIGKILL) }
        }
        await withCheckedContinuation { (c: CheckedContinuation<Void, Never>) in
            let empty = state.withLock { s in
                if s.hooks.isEmpty { return true }
                s.whenEmpty.append(c)
                return false
            }
            if empty { c.resume() }
        }
    }
}
