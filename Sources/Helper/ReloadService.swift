import Logging
import ServiceLifecycle
import Synchronization
import UnixSignals

/// Rereads the configuration on SIGHUP (ARCHITECTURE.md principle 6),
/// without stopping the server. A bad configuration is logged and the old one stays in force
/// (`ConfigurationReloader`).
struct ReloadService: Service {
    let logger: Logger
    let reloader: ConfigurationReloader
    /// Tells systemd (`Type=notify`) a reload is under way and when it is done, for
    /// `systemctl status`. `systemctl reload` does not wait for it: the unit's ExecReload checks the
    /// file and sends the signal, and returns then (systemd 252 has no `Type=notify-reload`).
    let notifier: SystemdNotifier
    /// Open once start-up's READY=1 went out; a reload before that tells systemd nothing, since
    /// its READY=1 would end start-up before every listener is bound.
    let readiness: ReadinessGate

    func run() async throws {
        // HelperMain ignores SIGHUP from its first line, so one sent before this trap is dropped
        // instead of killing the helper (the default action). That changes nothing here:
        // UnixSignalsSequence itself sets SIG_IGN right before it creates its Dispatch signal
        // source, which receives the signal regardless (ReloadEndToEndTests send real SIGHUPs).
        let signals = await UnixSignalsSequence(trapping: .sighup)
        for await _ in signals.cancelOnGracefulShutdown() {
            logger.info("SIGHUP: reloading")
            let announce = readiness.isOpen
            if announce { notifier.reloading(status: "reloading the configuration") }
            let report = await reloader.reload()
            guard announce else { continue }
            notifier.ready(status: report.failure == nil
                ? "answering DNS; configuration reloaded"
                : "answering DNS on the previous configuration; the new file was refused (see the log)")
        }
    }
}

/// Lets the process that started the helper in-process (tests, an embedding tool) ask for a
/// reload as SIGHUP would, and read what it did, without sending a signal to the whole process.
public final class ReloadHandle: Sendable {
    private let reloader = Mutex<ConfigurationReloader?>(nil)

    public init() {}

    func attach(_ reloader: ConfigurationReloader) { self.reloader.withLock { $0 = reloader } }

    /// Whether the helper has started far enough to take a reload.
    public var isReady: Bool { reloader.withLock { $0 != nil } }

    /// Reloads the configuration now; nil when the helper has not started yet.
    public func reload() async -> ReloadReport? {
        guard let reloader = reloader.withLock({ $0 }) else { return nil }
        return await reloader.reload()
    }
}
