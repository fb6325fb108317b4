import DomainLists
@testable import Engine
import Enforcement
import ScrollOffCore
@testable import Store
import Testing

/// The engine's capability types on their own, without an actor, a store or a clock: each keeps
/// its part of the state and the rules that need nothing else.
@Suite struct ListsLifecycleTests {
    @Test func a_snapshot_older_than_one_handed_in_already_is_not_admitted() {
        var lists = ListsLifecycle()
        // Each call is made outside `#expect`, which takes its operands as values.
        let admitted = [lists.admit(order: 2), lists.admit(order: 1), lists.admit(order: 2), lists.admit(order: nil), lists.admit(order: 3)]
        // An older snapshot (its parse finished later) and the same one again are not taken; a
        // call not from a snapshot always is.
        #expect(admitted == [true, false, false, true, true])
    }

    @Test func a_later_ticket_in_force_puts_every_earlier_one_in_force() {
        var lists = ListsLifecycle()
        let first = lists.nextTicket(), second = lists.nextTicket()
        #expect(lists.isInForce(first) == false)
        let resumed = lists.putInForce(second)
        #expect(resumed.isEmpty, "nobody waited")
        #expect(lists.isInForce(first) && lists.isInForce(second))
        let third = lists.nextTicket()
        #expect(lists.isInForce(third) == false)
    }

    @Test func handed_lists_take_one_of_two_names_that_differ_in_case_and_keep_a_failed_lists_previous_rules() throws {
        let kept = try ListParser.parse("kept.example\n").rules
        let previous = FetchedLists(lists: ["kept": .rules(kept)], names: ["kept"], hosts: ["lists.example.org"], generation: 1)
        let (state, fresh) = ListsLifecycle.handed(
            ["Feed": try ListParser.parse("a.example\n").rules, "feed": try ListParser.parse("b.example\n").rules],
            names: ["feed", "kept", "later"], hosts: nil, keeping: ["Kept"], copies: [:], previous: previous, generation: 2)
        #expect(state.lists.keys.sorted() == ["feed", "kept"])
        #expect(fresh.keys.sorted() == ["feed"])
        #expect(state.names == ["feed", "kept", "later"])
        #expect(state.hosts == ["lists.example.org"], "no hosts given: the previous ones stay")
        #expect(state.generation == 2)
        // Sorted, "Feed" comes first and wins.
        #expect(try state.lists["feed"]?.load().first?.name.text == "a.example")
        #expect(fresh["feed"]?.take().map { _ in true } == true)
    }
}

@Suite struct TimeRequestsTests {
    static let t0 = Instant(millisecondsSince1970: 1_800_000_000_000)

    @Test func a_pending_request_expires_a_day_after_it_was_made_and_an_answered_one_never_does() {
        var requests = TimeRequests([
            TimeRequest(id: 1, profile: "kid", seconds: 600, note: "homework", created: Self.t0),
            TimeRequest(id: 2, profile: "kid", seconds: 600, note: "music", created: Self.t0 + .hours(1)),
        ])
        requests.answered(id: 2, status: .approved, at: Self.t0 + .hours(2), by: "parent", note: nil)
        #expect(requests.nextExpiry == Self.t0 + TimeRequests.pendingLifetime)
        #expect(requests.expired(at: Self.t0 + .hours(24) - .seconds(1)).isEmpty)
        #expect(requests.expired(at: Self.t0 + .hours(24)).map(\.id) == [1])
        let change = TimeRequests.expiryChange(requests.expired(at: Self.t0 + .hours(24)), at: Self.t0 + .hours(24))
        #expect(change.operations.count == 2, "one answer and one event per request")
    }

    @Test func a_request_is_answered_once_and_retention_forgets_only_answered_ones() throws {
        var requests = TimeRequests([
            TimeRequest(id: 1, profile: "kid", seconds: 600, note: "homework", created: Self.t0),
            TimeRequest(id: 2, profile: "kid", seconds: 600, note: "music", created: Self.t0),
        ])
        #expect(try requests.answerable(id: 1).id == 1)
        requests.answered(id: 1, status: .declined, at: Self.t0, by: "parent", note: nil)
        #expect(throws: EngineError.self) { try requests.answerable(id: 1) }
        #expect(throws: EngineError.self) { try requests.answerable(id: 9) }
        requests.forgetRetained(now: Self.t0 + .hours(24 * Int64(Store.retention)) + .seconds(1))
        #expect(requests.list(profile: nil).map(\.id) == [2], "the pending one stays, however old")
    }
}

@Suite struct PlanBookTests {
    static let t0 = Instant(millisecondsSince1970: 1_800_000_000_000)

    @Test func a_preview_starts_a_flow_whose_plan_is_shown_again_uncounted_until_the_grant() {
        var book = PlanBook(plans: [Plan(id: 7, profile: "default", when: "I feel bored", then: "walk", created: Self.t0)], alternatives: [])
        let plan = book.plan(id: 7)!
        book.previewed(plan, profile: "default", entry: "youtube", at: Self.t0)
        #expect(book.plan(id: 7)?.shownCount == 1)
        #expect(book.planInFlow(profile: "default", entry: "youtube", at: Self.t0 + .minutes(5))?.id == 7)
        #expect(book.planInFlow(profile: "default", entry: "reddit", at: Self.t0 + .minutes(5)) == nil, "another entry is another flow")
        #expect(book.planInFlow(profile: "default", entry: "youtube", at: Self.t0 + PlanBook.flowWindow) == nil, "the flow window is over")
        book.granted(plan, profile: "default", entry: "youtube", at: Self.t0 + .minutes(6))
        #expect(book.planInFlow(profile: "default", entry: "youtube", at: Self.t0 + .minutes(7)) == nil, "after the grant the next preview counts again")
    }

    @Test func removing_a_profile_drops_its_plans_and_alternatives_only() {
        var book = PlanBook(plans: [Plan(id: 1, profile: "kid", when: "a", then: "b", created: Self.t0),
                                    Plan(id: 2, profile: "default", when: "a", then: "b", created: Self.t0)],
                            alternatives: [Alternative(id: 1, profile: "kid", text: "tea", created: Self.t0)])
        book.remove(profile: "kid")
        #expect(book.plans.map(\.id) == [2])
        #expect(book.alternatives.isEmpty)
        #expect(throws: EngineError.self) { try book.archivable(1, profile: "kid") }
    }
}

@Suite struct CommitBooksTests {
    static let t0 = Instant(millisecondsSince1970: 1_800_000_000_000)

    @Test func a_held_change_is_written_first_with_the_next_commit_and_only_a_commit_clears_it() {
        var books = CommitBooks()
        books.hold(StateChange([.saveSetting(key: "a", value: "1")]))
        books.hold(StateChange([.saveSetting(key: "b", value: "2")]))
        let written = books.toWrite(StateChange([.saveSetting(key: "c", value: "3")]))
        #expect(written.operations.count == 3)
        if case .saveSetting(let key, _) = written.operations.first { #expect(key == "a") } else { Issue.record("the held change is not first") }
        #expect(books.held != nil, "a failed write keeps it")
        _ = books.committed(CommitReceipt(), at: Self.t0)
        #expect(books.held == nil)
        #expect(books.lastCommitAt == Self.t0)
        #expect(books.toWrite(StateChange()).operations.isEmpty)
    }
}
