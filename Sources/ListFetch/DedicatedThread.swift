import Foundation

/// Runs blocking work (a libcurl transfer, fsync, parsing a large list) on a fresh thread and
/// awaits its result, so the cooperative thread pool of Swift concurrency never blocks on I/O.
enum DedicatedThread {
    static func run<T: Sendable>(name: String, _ body: @escaping @Sendable () -> T) async -> T {
        await withCheckedContinuation { continuation in
            let thread = Thread {
                continuation.resume(returning: body())
            }
            thread.name = name
            thread.start()
        }
    }
}
