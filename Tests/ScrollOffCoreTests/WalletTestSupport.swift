import Foundation
@testable import ScrollOffCore

/// Local wall times in a named zone, turned into instants with Foundation's calendar so the test
/// does not reuse the code under test to build its expectations.
struct LocalClock {
    let zone: String
    private let calendar: Calendar

    init(_ zone: String) {
        self.zone = zone
        var c = Calendar(identifier: .gregorian)
        c.timeZone = TimeZone(identifier: zone) ?? TimeZone(secondsFromGMT: 0)!
        self.calendar = c
    }

    func callAsFunction(_ year: Int, _ month: Int, _ day: Int, _ hour: Int = 0, _ minute: Int = 0, _ second: Int = 0) -> Instant {
        let date = calendar.date(from: DateComponents(year: year, month: month, day: day, hour: hour, minute: minute, second: second))!
        return Instant(millisecondsSince1970: Int64((date.timeIntervalSince1970 * 1000).rounded()))
    }

    var localCalendar: LocalCalendar { LocalCalendar(identifier: zone)! }
}

/// A wallet plus everything it returned, so tests can compare the balance with the ledger.
struct WalletHarness {
    var wallet: Wallet
    var rows: [LedgerRow] = []
    var events: [CreditEvent] = []

    init(_ knobs: Knobs = Preset.strict.knobs, zone: String = "Europe/Berlin", start: Instant) {
        wallet = Wallet(state: WalletState(asOf: start),
                        policy: CreditPolicy(knobs: knobs, calendar: LocalCalendar(identifier: zone)!))
    }

    @discardableResult
    mutating func record(_ o: CreditOutcome) -> CreditOutcome {
        rows += o.rows
        events += o.events
        return o
    }

    @discardableResult
    mutating func advance(to t: Instant, block: Bool = true) -> CreditOutcome {
        record(wallet.advance(to: t, blockInForce: block))
    }

    @discardableResult
    mutating func use(_ e: EntryID, for limit: Span? = nil, at t: Instant, curfewEndsAt: Instant? = nil) throws(CreditError) -> CreditOutcome {
        record(try wallet.use(e, for: limit, at: t, curfewEndsAt: curfewEndsAt))
    }

    @discardableResult
    mutating func stop(_ e: EntryID? = nil, at t: Instant) throws(Refusal) -> CreditOutcome {
        record(try wallet.stop(e, at: t))
    }

    var ledgerSum: Int64 { rows.reduce(0) { $0 + $1.deltaSeconds } }
    var balance: Int64 { wallet.balanceSeconds }

    func rows(_ reason: LedgerRow.Reason) -> [LedgerRow] { rows.filter { $0.reason == reason } }
}

extension Knobs {
    /// Strict knobs with one change, for tests that need a single different number.
    static func strict(_ change: (inout Knobs) -> Void) -> Knobs {
        var k = Preset.strict.knobs
        change(&k)
        return k
    }
}
