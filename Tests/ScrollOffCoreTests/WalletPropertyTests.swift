import Testing
import PropertyBased
@testable import ScrollOffCore

/// Property tests (SPEC §4): random sequences of earning time, spends, stops, peeks, tokens,
/// curfews, midnights and expiries, in three presets and three zones. After every step:
/// balance == sum of the ledger; balance never negative; credited earnings per local day never
/// above the cap; spends charged exactly the floor of the time used (fractions carried, never
/// lost or charged twice); peeks and tokens within their allowances; nothing opens during a curfew.
struct WalletPropertyTests {
    enum Op: Sendable, CustomStringConvertible {
        case wait(Span)
        case toggleBlock
        case toMidnight(minusMilliseconds: Int64)
        case curfew(Span)
        case use(EntryID, limit: Span?)
        case stop(EntryID?)
        case peek(EntryID)
        case token(EntryID)
        case starter
        case freeze(Span)
        case earmark(Int64, EntryID)
        case adjust(Int64)

        static let entries: [EntryID] = ["instagram", "tiktok", "reddit", "youtube"]

        /// Maps three random integers to an operation; waits are weighted so that hours pass and
        /// awards, expiries and grant ends happen between the other operations.
        static func make(_ kind: Int, _ n: Int, _ e: Int) -> Op {
            let entry = entries[e % entries.count]
            let n64 = Int64(n)
            switch kind {
            case 0 ... 5: return .wait(Span(milliseconds: n64 * 137))         // up to ~3.8 h, odd milliseconds
            case 6: return .toggleBlock
            case 7: return .toMidnight(minusMilliseconds: n64 % 3)
            case 8: return .curfew(.minutes(n64 % 240 + 1))
            case 9, 10: return .use(entry, limit: n % 3 == 0 ? nil : Span(milliseconds: n64 * 11 + 1))
            case 11: return .stop(n % 2 == 0 ? entry : nil)
            case 12, 13: return .peek(entry)
            case 14: return .token(entry)
            case 15: return .starter
            case 16: return .freeze(.minutes(n64 % 600 + 1))
            case 17: return .earmark(n64 % 400 + 1, entry)
            default: return .adjust(n64 % 500 - 250)
            }
        }

        var description: String {
            switch self {
            case .wait(let s): "wait(\(s))"
            case .toggleBlock: "toggleBlock"
            case .toMidnight(let m): "toMidnight(-\(m) ms)"
            case .curfew(let s): "curfew(\(s))"
            case .use(let e, let l): "use(\(e), \(l.map(\.description) ?? "-"))"
            case .stop(let e): "stop(\(e?.rawValue ?? "all"))"
            case .peek(let e): "peek(\(e))"
            case .token(let e): "token(\(e))"
            case .starter: "starter"
            case .freeze(let s): "freeze(\(s))"
            case .earmark(let s, let e): "earmark(\(s), \(e))"
            case .adjust(let s): "adjust(\(s))"
            }
        }
    }

    static let ops = zip(Gen.int(in: 0 ... 18), Gen.int(in: 0 ... 100_000), Gen.int(in: 0 ... 3))
        .map { (t: (Int, Int, Int)) in Op.make(t.0, t.1, t.2) }
        .array(of: 1 ... 120)
    static let presets = Gen<Preset>.case
    static let zoneNames = ["Europe/Berlin", "America/Los_Angeles", "Asia/Tokyo"]
    static let zones = Gen.int(in: 0 ... 2).map { zoneNames[$0] }

    /// Runs one sequence like the helper would, checking the invariants after every step.
    struct Driver {
        var account: CreditAccount
        let knobs: Knobs
        let calendar: LocalCalendar
        var now: Instant
        var block = false
        var curfewEnd: Instant?
        var curfewStart: Instant?
        var rows: [LedgerRow] = []
        var events: [CreditEvent] = []

        init(preset: Preset, zone: String) {
            var k = preset.knobs
            k.includedTokensPerMonth = 5  // so that the monthly ceiling is reached in long runs
            knobs = k
            calendar = LocalCalendar(identifier: zone)!
            now = Instant(secondsSince1970: 1_795_000_000) // 2026-11-18
            account = CreditAccount(state: CreditAccountState(asOf: now), policy: CreditPolicy(knobs: k, calendar: calendar))
        }

        var curfewNow: Instant? { curfewEnd.flatMap { $0 > now ? $0 : nil } }

        mutating func record(_ o: CreditOutcome) {
            rows += o.rows
            events += o.events
        }

        /// An open attempt: refused with `.curfew` and the curfew's end while one runs.
        mutating func attemptOpen(_ name: String, _ body: (inout CreditAccount, Instant?) throws -> CreditOutcome) {
            let curfew = curfewNow
            do {
                let out = try body(&account, curfew)
                #expect(curfew == nil, "\(name) opened an entry during a curfew")
                record(out)
            } catch let error as Refusal {
                if let curfew { #expect(error.rule == .curfew && error.opensAt == curfew, "\(name): \(error)") }
            } catch let error as CreditError {
                if let curfew { #expect(error.refusal?.rule == .curfew && error.refusal?.opensAt == curfew, "\(name): \(error)") }
            } catch {
                Issue.record("unexpected error \(error)")
            }
        }

        mutating func apply(_ op: Op) {
            switch op {
            case .wait(let s):
                now = now + s
                record(account.advance(to: now, blockInForce: block))
            case .toggleBlock:
                block.toggle()
                record(account.advance(to: now, blockInForce: block))
            case .toMidnight(let minus):
                now = max(now, calendar.nextMidnight(after: now) - Span(milliseconds: minus))
                record(account.advance(to: now, blockInForce: block))
            case .curfew(let length):
                // A curfew beats every grant on the rules side; `stop` closes the running spend
                // (a peek or token runs on to its end, unused, since `stop` closes spends only).
                curfewEnd = now + length
                curfewStart = now
                if let out = try? account.stop(nil, at: now) { record(out) }
            case .use(let e, let limit):
                let t = now
                attemptOpen("use") { a, c in try a.use(e, for: limit, at: t, curfewEndsAt: c) }
            case .stop(let e):
                if let out = try? account.stop(e, at: now) { record(out) }
            case .peek(let e):
                let t = now
                attemptOpen("peek") { a, c in try a.peek(e, at: t, curfewEndsAt: c) }
            case .token(let e):
                let t = now
                attemptOpen("token") { a, c in try a.token(e, at: t, curfewEndsAt: c) }
            case .starter:
                record(account.grantStarter(at: now))
            case .freeze(let s):
                record(account.freezeEarning(until: now + s, at: now))
            case .earmark(let s, let e):
                if let out = try? account.earmark(s, for: e, at: now) { record(out) }
            case .adjust(let s):
                if let out = try? account.adjust(s, note: "property test", at: now) { record(out) }
            }
        }

        func checkInvariants(after op: Op, step: Int) {
            let wallet = account.wallet
            let balance = wallet.balanceSeconds
            let sum = rows.reduce(0) { $0 + $1.deltaSeconds }
            #expect(balance == sum, "step \(step) \(op): balance \(balance) != ledger \(sum)")
            #expect(balance >= 0, "step \(step) \(op): negative balance")
            #expect(wallet.state.batches.allSatisfy { $0.remaining > 0 }, "step \(step) \(op): empty or negative batch")

            // Credited earnings (earn + capDiscard) per local day never above the cap.
            var earned: [LocalCalendar.Day: Int64] = [:]
            for r in rows where r.reason == .earn || r.reason == .capDiscard {
                earned[calendar.day(of: r.time), default: 0] += r.deltaSeconds
            }
            let cap = knobs.dailyEarnCap.wholeSeconds
            #expect(earned.values.allSatisfy { $0 >= 0 && $0 <= cap }, "step \(step) \(op): daily earn above cap: \(earned)")

            // Spends: exactly floor(time used) charged, the fraction carried.
            var usedMs: Int64 = 0
            for ev in events {
                if case .grantEnded(let g, _) = ev.kind, g.kind == .spend { usedMs += (g.end - g.start).milliseconds }
            }
            if let running = wallet.runningSpend, let s = wallet.state.spend {
                usedMs += (s.settledThrough - running.start).milliseconds
            }
            let charged = -rows.filter { $0.reason == .spend }.reduce(0) { $0 + $1.deltaSeconds }
            let carry = wallet.state.unchargedMilliseconds
            #expect((0 ..< 1000).contains(carry), "step \(step) \(op): carry \(carry)")
            #expect(charged * 1000 + carry == usedMs, "step \(step) \(op): charged \(charged) s + \(carry) ms for \(usedMs) ms used")

            // Allowances: peeks per local day, tokens per local month.
            var peeks: [LocalCalendar.Day: Int] = [:]
            var tokens: [LocalCalendar.Month: Int] = [:]
            for r in rows {
                switch r.reason {
                case .bypassFree, .bypassCredit: peeks[calendar.day(of: r.time), default: 0] += 1
                case .bypassToken: tokens[calendar.month(of: r.time), default: 0] += 1
                default: break
                }
            }
            #expect(peeks.values.allSatisfy { $0 <= knobs.freePeeksPerDay + knobs.paidPeeksPerDay }, "step \(step): \(peeks)")
            #expect(tokens.values.allSatisfy { $0 <= Knobs.tokenMonthlyCeiling }, "step \(step): \(tokens)")

            // Nothing open during a curfew: the driver closes grants at its start, so any grant in
            // use now was opened inside it.
            if curfewNow != nil, let curfewStart {
                #expect(wallet.grantsInUse.allSatisfy { $0.start <= curfewStart }, "step \(step) \(op): grant opened in a curfew: \(wallet.grantsInUse)")
                #expect(wallet.runningSpend == nil, "step \(step) \(op): a spend runs in a curfew")
            }

            // Grants never stack (SPEC §4): no spend overlaps a peek or token on the same entry,
            // so no second is charged twice or paid for while a bypass already opens it.
            var spans: [Int64: Grant] = [:]
            for ev in events {
                switch ev.kind {
                case .grantOpened(let g), .grantShortened(let g), .grantEnded(let g, _): spans[g.id] = g
                default: break
                }
            }
            for g in wallet.grantsInUse { spans[g.id] = g }
            let all = Array(spans.values)
            for a in all where a.kind == .spend {
                for b in all where b.kind != .spend && b.entry == a.entry && b.start < a.end && a.start < b.end {
                    Issue.record("step \(step) \(op): spend \(a) overlaps \(b)")
                }
            }
        }
    }

    @Test func random_sequences_keep_the_wallet_invariants() async {
        await propertyCheck(count: 300, input: Self.presets, Self.zones, Self.ops) { preset, zone, ops in
            var d = Driver(preset: preset, zone: zone)
            for (i, op) in ops.enumerated() {
                d.apply(op)
                d.checkInvariants(after: op, step: i)
            }
        }
    }
}
