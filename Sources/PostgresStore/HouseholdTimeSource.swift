import Foundation
import ScrollOffCore
import Store

/// The household's one time base: the database server's clock (docs/operations.md, "One clock").
///
/// Two helpers write instants into the same rows: a grant opened on one is closed and charged on
/// the other, a cooldown set on one is read on the other. Each on its own wall clock, a helper
/// whose clock is 2 hours ahead would open grants that start in the other's future (and charge
/// nothing, or everything, when the other closes them) and lift curfews early. So every helper
/// reads its wall clock as the database's: this machine's reading less the offset measured against
/// the server's `clock_timestamp()` (at start, then every few seconds by the helper's sync
/// service). The boot clocks, which the trusted clock advances by (SPEC §11), are this machine's
/// own and unchanged; only the wall reading moves, and with it the instant a fresh start takes and
/// the tamper check. Refusing writes past a skew bound instead would leave the household without
/// changes whenever one machine's NTP failed; taking the server's time keeps the rules exact and
/// `doctor` still names the machine whose clock is off.
public final class HouseholdTimeSource: TimeSource, @unchecked Sendable {
    public let local: any TimeSource
    let store: PostgresStateStore

    /// Measures the offset once, so the first reading (the engine's start) is on the server's time.
    public init(local: any TimeSource, store: PostgresStateStore) throws(StoreError) {
        self.local = local
        self.store = store
        try measure()
    }

    /// How far this machine's clock is ahead of the server's (negative: behind), in milliseconds.
    public var offsetMilliseconds: Int64 { store.clockOffsetMilliseconds }

    /// Measures the offset again (and records this node as seen, for `doctor`).
    @discardableResult
    public func measure() throws(StoreError) -> Int64 {
        let local = self.local
        return try store.heartbeat(localClock: { Date(timeIntervalSince1970: Double(local.read().wall.millisecondsSince1970) / 1000) })
    }

    public func read() -> ClockReading {
        var reading = local.read()
        reading.wall = reading.wall - Span(milliseconds: offsetMilliseconds)
        return reading
    }
}
