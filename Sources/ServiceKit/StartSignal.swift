import Logging
import NIOCore
import HummingbirdCore
import Synchronization

/// Hands the bind's outcome from the server's task to `bind()`, and holds accepting back until
/// `serve()` (connections queue in the listen backlog meanwhile, as with a plain bind).
package final class StartSignal: Sendable {
    private struct State {
        var bound: Result<Void, any Error>?
        var listener: (any Channel)?
        var bindWaiters: [CheckedContinuation<Void, any Error>] = []
        var serving = false
        var serveWaiters: [CheckedContinuation<Void, Never>] = []
    }

    private let state = Mutex(State())

    package init() {}

    /// The listening channel, once bound.
    var listener: (any Channel)? { state.withLock { $0.listener } }

    /// Runs `server` in a task of its own and reports its bind (or its end) here. Detached, so
    /// Hummingbird's own graceful-shutdown handler is not armed by the helper's service group:
    /// shutdown cancels `serve(_:)` instead, and a second, graceful stop of the same server would
    /// only log "Already closed" and a CancellationError.
    package func runDetached<Child: ServerChildChannel>(_ server: Server<Child>) -> Task<Void, any Error> {
        Task.detached { [self] in
            do {
                try await server.run()
                signal(.failure(CancellationError()))
            } catch {
                signal(.failure(error))
                throw error
            }
        }
    }

    /// Lets the server accept, and waits for `running` to end. Cancelling closes the listener
    /// first, so Hummingbird's accept loop ends as a closed socket rather than as an error, then
    /// cancels the connections (their request loops close their input).
    package func serve(_ running: Task<Void, any Error>) async throws {
        serve()
        let listener = self.listener
        try await withTaskCancellationHandler {
            try await running.value
        } onCancel: {
            if let listener {
                listener.close().whenComplete { _ in running.cancel() }
            } else {
                running.cancel()
            }
        }
    }

    package func signal(_ outcome: Result<Void, any Error>, listener: (any Channel)? = nil) {
        let waiters = state.withLock { state -> [CheckedContinuation<Void, any Error>] in
            guard state.bound == nil else { return [] }
            state.bound = outcome
            state.listener = listener
            defer { state.bindWaiters = [] }
            return state.bindWaiters
        }
        for waiter in waiters { waiter.resume(with: outcome) }
    }

    package func waitForBind() async throws {
        try await withCheckedThrowingContinuation { (continuation: CheckedContinuation<Void, any Error>) in
            let outcome = state.withLock { state -> Result<Void, any Error>? in
                if state.bound == nil { state.bindWaiters.append(continuation) }
                return state.bound
            }
            if let outcome { continuation.resume(with: outcome) }
        }
    }

    package func serve() {
        let waiters = state.withLock { state -> [CheckedContinuation<Void, Never>] in
            state.serving = true
            defer { state.serveWaiters = [] }
            return state.serveWaiters
        }
        for waiter in waiters { waiter.resume() }
    }

    package func waitForServe() async {
        await withCheckedContinuation { (continuation: CheckedContinuation<Void, Never>) in
            let now = state.withLock { state -> Bool in
                if !state.serving { state.serveWaiters.append(continuation) }
                return state.serving
            }
            if now { continuation.resume() }
        }
    }
}

extension Logger {
    /// This logger for Hummingbird's own lines, warnings and worse only: it says "listening" at
    /// info with the temporary socket path, and the helper says it once itself. A wrapping handler
    /// rather than a lower `logLevel`, because the helper's level is one for the whole process
    /// (`LiveLevelHandler`): setting it on a copy would silence every other line.
    package func with(level: Logger.Level) -> Logger {
        let base = self
        return Logger(label: label) { _ in MinimumLevelHandler(base: base, minimum: level) }
    }
}

/// Passes on what is at `minimum` or worse and drops the rest.
struct MinimumLevelHandler: LogHandler {
    let base: Logger
    let minimum: Logger.Level
    var metadata: Logger.Metadata = [:]

    var logLevel: Logger.Level {
        get { max(minimum, base.logLevel) }
        set {}
    }

    subscript(metadataKey key: String) -> Logger.Metadata.Value? {
        get { metadata[key] }
        set { metadata[key] = newValue }
    }

    func log(event: LogEvent) {
        guard event.level >= minimum else { return }
        var merged = metadata
        if let extra = event.metadata { merged.merge(extra) { $1 } }
        base.log(level: event.level, event.message, metadata: merged, source: event.source, file: event.file, function: event.function, line: event.line)
    }
}
