import NIOCore
import NIOConcurrencyHelpers

/// Tracks which upstreams answer, so a dead one stops costing every query its timeout.
///
/// After `failuresBeforeBackoff` consecutive failures an upstream is tried last for `backoff`;
/// one success restores it. Nothing is ever skipped entirely: when every upstream is backed off,
/// they are still tried in order, since a wrong "all down" costs more than a slow answer.
package final class UpstreamHealth: Sendable {
    struct Record {
        var consecutiveFailures = 0
        var backedOffUntil: UInt64 = 0
        /// Every failure since start, for the metrics; a success does not reset it.
        var totalFailures: UInt64 = 0
    }

    private let records: NIOLockedValueBox<[Record]>
    let failuresBeforeBackoff: Int
    let backoffNanoseconds: UInt64

    package init(count: Int, failuresBeforeBackoff: Int, backoff: TimeAmount) {
        records = NIOLockedValueBox(Array(repeating: Record(), count: count))
        self.failuresBeforeBackoff = max(failuresBeforeBackoff, 1)
        backoffNanoseconds = UInt64(max(backoff.nanoseconds, 0))
    }

    /// Upstream indices in the order to try them at `now` (monotonic nanoseconds).
    package func order(now: UInt64) -> [Int] {
        records.withLockedValue { records in
            let healthy = records.indices.filter { records[$0].backedOffUntil <= now }
            let backedOff = records.indices.filter { records[$0].backedOffUntil > now }
                .sorted { records[$0].backedOffUntil < records[$1].backedOffUntil }
            return healthy + backedOff
        }
    }

    package func succeeded(_ index: Int) {
        records.withLockedValue { records in
            guard records.indices.contains(index) else { return }
            records[index].consecutiveFailures = 0
            records[index].backedOffUntil = 0
        }
    }

    /// Returns true when this failure started a back-off, so the caller can log it once.
    @discardableResult
    package func failed(_ index: Int, now: UInt64) -> Bool {
        records.withLockedValue { records in
            guard records.indices.contains(index) else { return false }
            records[index].consecutiveFailures += 1
            records[index].totalFailures &+= 1
            guard records[index].consecutiveFailures >= failuresBeforeBackoff else { return false }
            let wasHealthy = records[index].backedOffUntil <= now
            records[index].backedOffUntil = now &+ backoffNanoseconds
            return wasHealthy
        }
    }

    /// Each upstream's state at `now`, in configuration order, for the metrics.
    package func states(now: UInt64) -> [(up: Bool, consecutiveFailures: Int, totalFailures: UInt64)] {
        records.withLockedValue { records in
            records.map { ($0.backedOffUntil <= now, $0.consecutiveFailures, $0.totalFailures) }
        }
    }
}
