import Logging
import ServiceLifecycle
import UnixSignals

/// Rereads lists and rules on SIGHUP (ARCHITECTURE.md principle 6), without stopping the server.
struct ReloadService: Service {
    let logger: Logger
    let reload: @Sendable () -> Void

    func run() async throws {
        let signals = await UnixSignalsSequence(trapping: .sighup)
        for await _ in signals.cancelOnGracefulShutdown() {
            logger.info("SIGHUP: reloading")
            reload()
        }
    }
}
