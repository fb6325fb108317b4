#if canImport(Glibc)
import Glibc
#endif
import ControlAPI
import ControlServer
import Engine
import Foundation
import ListFetch
import Logging
import ScrollOffCore
import TestSupport
import Testing

/// The household's bound on what every list together holds (`ListBound`): its sums and its words.
@Suite
struct ListBoundArithmeticTests {
    static func meta(_ name: String, names: Int?, held: Int? = nil, copy: Bool = true) throws -> ListMetadata {
        var meta = ListMetadata(name: try ListName(name), url: "file:///srv/\(name).txt")
        meta.entryCount = names
        if copy { meta.lastChanged = Instant(secondsSince1970: 1_795_000_000) }
        if let held { meta.held = HeldNames(count: held, until: nil, reason: "cooldown", since: Instant(secondsSince1970: 1_795_000_000)) }
        return meta
    }

    @Test func names_in_force_count_every_other_copy_and_its_held_names_but_not_a_list_without_a_copy() throws {
        let lists = [try Self.meta("a", names: 1_000), try Self.meta("b", names: 500, held: 20),
                     try Self.meta("c", names: 7_000, copy: false), try Self.meta("d", names: 300)]
        #expect(ListBound.namesInForce(lists, besides: try ListName("d")) == 1_520)
        #expect(ListBound.namesInForce(lists, besides: try ListName("a")) == 820)
        #expect(ListBound.namesInForce([], besides: try ListName("a")) == 0)
    }

    @Test func a_list_that_reaches_the_bound_exactly_is_admitted_and_one_name_more_is_refused_with_the_numbers() throws {
        let bound = ListBound(maxNames: 2_000_000, maxLists: 32)
        let name = try ListName("big")
        try bound.checkNames(name, names: 500_000, elsewhere: 1_500_000, replacing: false)
        let refused = #expect(throws: ListBoundExceeded.self) {
            try bound.checkNames(name, names: 500_001, elsewhere: 1_500_000, replacing: false)
        }
        let message = try #require(refused).message
        #expect(message.hasPrefix("1,500,000 names are in force in the other lists; list 'big' has 500,001, 2,000,001 in all, "
                                  + "above the household's bound of 2,000,000 names ([lists] max_names). "
                                  + "It was not added; the lists in force are unchanged."), "\(message)")
        #expect(message.contains("`scrolloff lists rm NAME`") && message.contains("root raises [lists] max_names"), "\(message)")
    }

    @Test func a_refresh_past_the_bound_says_the_previous_copy_stays_and_its_held_names_count() throws {
        let bound = ListBound(maxNames: 100, maxLists: 4)
        let name = try ListName("grows")
        // 60 new + 10 held + 30 elsewhere = 100: in; one held name more passes it.
        try bound.checkNames(name, names: 60, held: 10, elsewhere: 30, replacing: true)
        let refused = #expect(throws: ListBoundExceeded.self) {
            try bound.checkNames(name, names: 60, held: 11, elsewhere: 30, replacing: true)
        }
        #expect(try #require(refused).message.contains(
            "the new copy of list 'grows' has 60, 101 in all, above the household's bound of 100 names ([lists] max_names). "
                + "The new copy was not used; the previous copy stays in force."))
    }

    @Test func hostile_counts_cannot_wrap_the_sum_below_the_bound() throws {
        let bound = ListBound(maxNames: 100, maxLists: 4)
        let refused = #expect(throws: ListBoundExceeded.self) {
            try bound.checkNames(try ListName("x"), names: Int.max, held: 1, elsewhere: Int.max, replacing: false)
        }
        #expect(try #require(refused).message.contains("more than 9,223,372,036,854,775,807 in all"))
    }

    @Test func one_list_more_than_the_bound_of_lists_is_refused_and_the_last_one_within_it_is_not() throws {
        let bound = ListBound(maxNames: 100, maxLists: 3)
        try bound.checkNewList(try ListName("third"), existing: 2)
        let refused = #expect(throws: ListBoundExceeded.self) { try bound.checkNewList(try ListName("fourth"), existing: 3) }
        #expect(try #require(refused).message.hasPrefix(
            "3 lists are in force, the household's bound of 3 ([lists] max_lists); list 'fourth' was not added and nothing else changed."))
    }

    @Test func the_defaults_fit_a_small_router() {
        // 2,000,000 names at ~60 bytes each while a copy is put in force is ~120 MB: a quarter of
        // a 512 MB router. The review's five 1.5 M-name lists (7.5 M names) do not fit.
        #expect(ListBound().maxNames == 2_000_000 && ListBound().maxLists == 32)
        #expect(throws: ListBoundExceeded.self) {
            try ListBound().checkNames(try ListName("fifth"), names: 1_500_000, elsewhere: 6_000_000, replacing: false)
        }
    }
}

extension ControlEndToEnd {
/// A group member with edit rights may add lists, but not past the household's bound: the add is
/// refused with the numbers, the lists in force stay in force, and a refresh that would pass it
/// keeps the copy in force and says so.
@Suite
struct ListBoundTests {
    @Test func a_member_adding_lists_past_the_households_bound_is_refused_and_the_lists_in_force_stay() async throws {
        let folder = try makeTemporaryDirectory(mode: 0o755)
        defer { try? FileManager.default.removeItem(atPath: folder) }
        let log = CapturedLog()
        let server = try await EngineServer(
            socketMode: 0o666, directoryMode: 0o755, authorizer: GroupMembershipAuthorizer(groupName: "users"),
            lists: ListsConfiguration(sourceRules: ListSourceRules(memberFolders: [folder]), bound: ListBound(maxNames: 100, maxLists: 3)),
            logger: log.logger(label: "lists-bound", level: .debug))
        defer { Task { await server.stop() } }
        for (name, count) in [("alpha", 40), ("beta", 40), ("gamma", 40), ("delta", 5), ("eps", 1)] {
            try writeList("\(folder)/\(name).txt", names: count, prefix: name)
        }
        func member(_ arguments: [String]) async throws -> ProcessResult { try await ListSourceAccessTests.member(arguments, server) }

        #expect(try await member(["lists", "add", "file://\(folder)/alpha.txt", "--name", "alpha"]).status == 0)
        #expect(try await member(["lists", "add", "file://\(folder)/beta.txt", "--name", "beta"]).status == 0)
        #expect(try await server.cli(["block", "alpha", "beta"]).status == 0)

        // 80 in force + 40 = 120 > 100 names.
        let tooMany = try await member(["lists", "add", "file://\(folder)/gamma.txt", "--name", "gamma"])
        #expect(tooMany.status != 0, "\(tooMany)")
        #expect(tooMany.stderr.contains("80 names are in force in the other lists; list 'gamma' has 40, 120 in all, above the household's bound of 100 names"),
                "\(tooMany.stderr)")
        #expect(tooMany.stderr.contains("scrolloff lists rm NAME"), "\(tooMany.stderr)")
        #expect(!FileManager.default.fileExists(atPath: server.directory + "/state/lists/gamma.list"))

        // Within the names, the third list fits; a fourth passes the bound on lists before any download.
        #expect(try await member(["lists", "add", "file://\(folder)/delta.txt", "--name", "delta"]).status == 0)
        let fourth = try await member(["lists", "add", "file://\(folder)/eps.txt", "--name", "eps"])
        #expect(fourth.status != 0, "\(fourth)")
        #expect(fourth.stderr.contains("3 lists are in force, the household's bound of 3 ([lists] max_lists)"), "\(fourth.stderr)")

        var listed = try decode(ListsResponse.self, try await server.cli(["lists", "list", "--json"]).stdout)
        #expect(listed.lists.map { $0.name } == ["alpha", "beta", "delta"])
        #expect(listed.lists.map { $0.entryCount } == [40, 40, 5])
        #expect(await server.blocks("alpha39.example.com"), "the earlier lists stay in force")
        #expect(await server.blocks("beta0.example.com"))
        #expect(await server.blocks("gamma0.example.com") == false)

        // alpha grows to 60: 60 + 45 = 105 > 100, so its refresh keeps the 40-name copy and says so.
        try writeList("\(folder)/alpha.txt", names: 60, prefix: "alpha")
        _ = try await server.cli(["lists", "update", "alpha"])
        listed = try decode(ListsResponse.self, try await server.cli(["lists", "list", "--json"]).stdout)
        let alpha = try #require(listed.lists.first { $0.name == "alpha" })
        #expect(alpha.entryCount == 40 && alpha.servingCopy)
        #expect(alpha.lastErrorCode == "over-bound")
        #expect(alpha.lastError?.contains("45 names are in force in the other lists; the new copy of list 'alpha' has 60, 105 in all") == true,
                "\(alpha.lastError ?? "nil")")
        #expect(alpha.lastError?.contains("the previous copy stays in force") == true)
        #expect(await server.blocks("alpha39.example.com"))
        #expect(await server.blocks("alpha59.example.com") == false, "the refused copy's new names are not in force")
    }
}
}
