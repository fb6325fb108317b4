import Logging
import ServiceLifecycle
import Synchronization
import UnixSignals

/// Rereads the configuration and the diagnostic lists on SIGHUP (ARCHITECTURE.md principle 6),
/// without stopping the server. A bad configuration is logged and the old one stays in force
/// (`ConfigurationReloader`).
struct ReloadService: Service {
    let logger: Logger
    /// Rereads the diagnostic `--blocklist`/`--managed-list` files.
    let reloadDiagnostic: @Sendable () -> Void
    let reloader: ConfigurationReloader
    /// Tells systemd (`Type=notify`) a reload is under way and when it is done, so
    /// `systemctl reload` returns once the new configuration is in force or refused.
    let notifier: SystemdNotifier

    func run() async throws {
        let signals = await UnixSignalsSequence(trapping: .sighup)
        for await _ in signals.cancelOnGracefulShutdown() {
            logger.info("SIGHUP: reloading")
            notifier.reloading(status: "reloading the configuration and lists")
            reloadDiagnostic()
            let report = await reloader.reload()
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
