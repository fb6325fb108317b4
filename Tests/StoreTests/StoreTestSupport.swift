import Foundation
import ScrollOffCore
@testable import Store

/// A fresh directory under the system temp dir, removed by `remove()`.
struct TemporaryDirectory {
    let path: String

    init(_ label: String = #function) {
        let name = label.filter { $0.isLetter || $0.isNumber }
        path = NSTemporaryDirectory() + "store-tests-\(name)-\(UUID().uuidString)"
    }

    /// The state directory inside, not created yet (the store creates it).
    var stateDirectory: String { path + "/state" }
    var databasePath: String { stateDirectory + "/scrolloff.sqlite" }

    func remove() { try? FileManager.default.removeItem(atPath: path) }
}

enum Fixture {
    static let profile = "home"
    static let start = Instant(secondsSince1970: 1_795_000_000) // 2026-11-18 11:06:40 UTC, a Wednesday
    static let zone = "Europe/Berlin"
    static var calendar: LocalCalendar {
        guard let c = LocalCalendar(identifier: zone) else { fatalError("tzdata lacks \(zone)") }
        return c
    }

    static func anchor(_ t: Instant, boot: UInt64 = 42_000_000_000, id: String = "boot-a") -> ClockAnchor {
        ClockAnchor(trusted: t, bootNanoseconds: boot, bootID: id)
    }

    static func settings(_ name: String = profile, preset: Preset = .flexible) -> ProfileSettings {
        ProfileSettings(name: name, clientCIDRs: ["192.168.1.0/24", "fd00::/8"], timeZoneID: zone, preset: preset,
                        overrides: KnobOverrides(cooldown: .hours(3), rolloverDays: 2), ownerUIDs: [1000, 1001])
    }

    static func policy(_ preset: Preset = .flexible) -> CreditPolicy {
        CreditPolicy(knobs: preset.knobs, calendar: calendar)
    }

    /// Opens a store with one saved profile.
    static func store(in dir: TemporaryDirectory, preset: Preset = .flexible) throws -> Store {
        let store = try Store(directory: dir.stateDirectory)
        try store.commit(StateChange([.saveProfile(settings(preset: preset))]), anchor: anchor(start))
        return store
    }

    /// Runs `op` on `account` at `t` and commits what it produced; returns the receipt.
    @discardableResult
    static func apply(_ store: Store, _ account: inout CreditAccount, at t: Instant, profile: String = profile,
                      _ op: (inout CreditAccount) throws -> CreditOutcome) throws -> CommitReceipt {
        let outcome = try op(&account)
        var change = StateChange()
        change.record(outcome, account: account.state, profile: profile)
        return try store.commit(change, anchor: anchor(t))
    }

    /// A realistic flexible-preset account after a few hours: starter credit, earned credit, an
    /// earmark, a free and a paid peek, a token, and a spend still running.
    static func busyAccount(in store: Store) throws -> CreditAccount {
        var a = CreditAccount(state: CreditAccountState(asOf: start), policy: policy())
        var t = start
        try apply(store, &a, at: t) { $0.grantStarter(at: t) }
        try apply(store, &a, at: t) { $0.advance(to: t, blockInForce: true) }
        t = t + .hours(3) + .seconds(7)
        try apply(store, &a, at: t) { $0.advance(to: t, blockInForce: true) }
        try apply(store, &a, at: t) { try $0.earmark(200, for: "reddit", at: t) }
        try apply(store, &a, at: t) { try $0.peek("instagram", task: "reply to Sam", at: t) }
        t = t + .minutes(4)
        try apply(store, &a, at: t) { try $0.peek("instagram", at: t) }
        t = t + .minutes(4)
        try apply(store, &a, at: t) { try $0.token("tiktok", task: "find the recipe", at: t) }
        t = t + .minutes(11)
        try apply(store, &a, at: t) { try $0.use("reddit", for: .minutes(5), task: "one thread", at: t) }
        t = t + .seconds(90) + .milliseconds(250)
        try apply(store, &a, at: t) { $0.advance(to: t, blockInForce: true) }
        return a
    }
}

extension Span {
    static func milliseconds(_ ms: Int64) -> Span { Span(milliseconds: ms) }
}

/// File mode bits of `path`, or nil when it does not exist.
func mode(of path: String) -> mode_t? {
    var info = stat()
    guard stat(path, &info) == 0 else { return nil }
    return info.st_mode & 0o777
}
