// store-crash-probe: drives the real wallet against the real store in a loop and prints the id of
// every ledger row right after its commit returned, one per line. StoreTests kills it with SIGKILL
// at chosen moments and checks that every printed (acknowledged) row survived, that the balance
// still equals the ledger and that `quick_check` passes (SPEC §3: kill -9 loses nothing acknowledged).
//
// Usage: store-crash-probe STATE_DIR [ITERATIONS]   (no ITERATIONS: run until killed)
// Time is simulated (20 min per step from the last saved instant), so runs are deterministic
// apart from where the kill lands, and each restart continues from what `load()` returned.
import Foundation
import ScrollOffCore
import Store

let profile = "probe"
let entry: EntryID = "instagram"
let step = Span.minutes(20)

func fail(_ message: String) -> Never {
    FileHandle.standardError.write(Data("store-crash-probe: \(message)\n".utf8))
    exit(1)
}

let arguments = CommandLine.arguments
guard arguments.count >= 2 else { fail("usage: store-crash-probe STATE_DIR [ITERATIONS]") }
let iterations = arguments.count >= 3 ? Int(arguments[2]) : nil

do {
    let store = try Store(directory: arguments[1])
    let loaded = try store.load()
    guard let calendar = LocalCalendar(identifier: "UTC") else { fail("no UTC zone") }
    let policy = CreditPolicy(knobs: Preset.strict.knobs, calendar: calendar)
    var now = loaded.anchor?.trusted ?? Instant(secondsSince1970: 1_790_000_000)
    var account: CreditAccount
    if let saved = loaded.profile(named: profile)?.account {
        account = CreditAccount(state: saved, policy: policy)
    } else {
        account = CreditAccount(state: CreditAccountState(asOf: now), policy: policy)
        var change = StateChange([.saveProfile(ProfileSettings(name: profile, timeZoneID: "UTC"))])
        let outcome = account.grantStarter(at: now)
        change.record(outcome, account: account.state, profile: profile)
        try store.commit(change, anchor: ClockAnchor(trusted: now, bootNanoseconds: 0, bootID: "probe"))
    }

    var i = 0
    while iterations.map({ i < $0 }) ?? true {
        i += 1
        now = now + step
        let outcome: CreditOutcome
        do {
            // Five quiet steps (100 min: an award), then a top-up, a peek and a short spend; credit
            // earned the day before expires at midnight. Every ledger reason but tokens shows up.
            switch i % 8 {
            case 5: outcome = try account.adjust(60, note: "probe top-up, step \(i)", at: now)
            case 6: outcome = try account.peek(entry, task: "check \"messages\", then stop", at: now)
            case 7: outcome = try account.use(entry, for: .minutes(2), at: now)
            default: outcome = account.advance(to: now, blockInForce: true)
            }
        } catch {
            // A refusal (no peeks left, no credit) changes nothing; the next step moves on.
            continue
        }
        var change = StateChange()
        change.record(outcome, account: account.state, profile: profile)
        let receipt = try store.commit(change, anchor: ClockAnchor(trusted: now, bootNanoseconds: UInt64(i), bootID: "probe"))
        // Only now is the change acknowledged: say so, unbuffered.
        if !receipt.ledgerIDs.isEmpty {
            FileHandle.standardOutput.write(Data(receipt.ledgerIDs.map { "\($0)\n" }.joined().utf8))
        }
    }
} catch {
    fail(error.description)
}
