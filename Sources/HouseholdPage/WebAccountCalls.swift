import Foundation
import Store
import Synchronization

/// The page's calls to the household's database (`WebAccountStore`): off the Swift concurrency
/// pool, since each waits for the server (up to the store's statement timeout), one at a time.
/// After the database did not answer, the calls of the next `pause` fail at once without asking
/// it: each would wait seconds before this helper's own copy answered, and the page stays quick
/// while the database is away.
final class WebAccountCalls: Sendable {
    static let pause: Duration = .seconds(5)
    private let queue: DispatchQueue
    private let awayUntil = Mutex<ContinuousClock.Instant?>(nil)

    init(label: String) { queue = DispatchQueue(label: label) }

    func run<T: Sendable>(_ body: @escaping @Sendable () throws(StoreError) -> T) async -> Result<T, StoreError> {
        if let until = awayUntil.withLock({ $0 }), ContinuousClock.now < until {
            return .failure(.unreachable(location: "the household database", detail: "it did not answer a moment ago"))
        }
        let result: Result<T, StoreError> = await withCheckedContinuation { continuation in
            queue.async {
                do throws(StoreError) { continuation.resume(returning: .success(try body())) } catch {
                    continuation.resume(returning: .failure(error))
                }
            }
        }
        let away: ContinuousClock.Instant?
        if case .failure(.unreachable) = result { away = .now + Self.pause } else { away = nil }
        awayUntil.withLock { $0 = away }
        return result
    }
}
