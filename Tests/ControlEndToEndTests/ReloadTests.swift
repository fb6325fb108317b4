import Config
import Engine
import Foundation
import Helper
import Logging
import ScrollOffCore
import ServiceKit
import Sinkhole
import Store
import Testing
import TestSupport

extension ControlEndToEnd {
/// The running helper takes a new configuration (SPEC §13): real sockets, real dig, a real dnsmasq
/// upstream, the whole `HelperMain` in this process, reloaded the way SIGHUP reloads it.
@Suite
struct ReloadTests {
    /// TTL of the first record line of `section` dig printed (`name. TTL IN TYPE data`).
    static func ttl(_ output: String, type: String) -> Int? {
        for line in output.split(separator: "\n") where !line.hasPrefix(";") {
            let fields = line.split(whereSeparator: { $0 == " " || $0 == "\t" })
            if fields.count >= 4, fields[3] == type { return Int(fields[1]) }
        }
        return nil
    }

    /// A helper with `blocked.test` blocked the way a person blocks it (`scrolloff block`).
    static func helperBlocking(upstream: UpstreamResolver) async throws -> ReloadableHelper {
        let helper = try await ReloadableHelper(upstream: upstream)
        let blocked = try await cli(["block", "blocked.test"], socket: helper.socket)
        #expect(blocked.status == 0, "\(blocked)")
        return helper
    }

    @Test func a_reload_switches_upstreams_blocking_mode_and_blocked_ttl_while_serving() async throws {
        let first = try await UpstreamResolver(answering: "198.51.100.1")
        let second = try await UpstreamResolver(answering: "198.51.100.2")
        defer { first.stop(); second.stop() }
        let helper = try await Self.helperBlocking(upstream: first)
        defer { Task { await helper.stop() } }

        #expect(try await helper.query("one.test") == "198.51.100.1\n")
        let nullAnswer = try await helper.query("blocked.test", ["+noall", "+answer"])
        #expect(nullAnswer.contains("0.0.0.0"))
        #expect(Self.ttl(nullAnswer, type: "A") == 10)

        let otherPort = try freeLoopbackPort()
        let report = try #require(await helper.reload { c in
            c.upstreams = [second.hostPort]
            c.blockingMode = .nxdomain
            c.blockedTTL = 3
            c.cache = CacheConfiguration(capacity: 500)
            c.listen = [HostPort(host: "127.0.0.1", port: otherPort)]
            c.eventLoops = 4
        })
        #expect(report.failure == nil)
        #expect(Set(report.applied) == ["dns.upstreams", "dns.blocking_mode", "dns.blocked_ttl", "dns.cache"])
        #expect(report.needsRestart == ["dns.listen", "helper.threads"])
        #expect(helper.log.lines.contains { $0.contains("configuration reloaded") && $0.contains("dns.listen, helper.threads take effect at the next restart") })

        // Still on the old port (listen waits for a restart), now asking the new upstream.
        #expect(try await helper.query("two.test") == "198.51.100.2\n")
        let blocked = try await helper.query("blocked.test", ["+noall", "+comments", "+authority"])
        #expect(blocked.contains("status: NXDOMAIN"), "\(blocked)")
        #expect(Self.ttl(blocked, type: "SOA") == 3, "\(blocked)")

        // A second reload with the same file changes nothing, and says so.
        let again = try #require(await helper.reload { _ in })
        #expect(again.applied.isEmpty)
        #expect(again.needsRestart == ["dns.listen", "helper.threads"], "the old values are still the ones in force")
    }

    @Test func a_bad_configuration_is_logged_and_the_old_one_keeps_answering() async throws {
        let first = try await UpstreamResolver(answering: "198.51.100.1")
        let second = try await UpstreamResolver(answering: "198.51.100.2")
        defer { first.stop(); second.stop() }
        let helper = try await Self.helperBlocking(upstream: first)
        defer { Task { await helper.stop() } }

        // The file does not parse: the loader's error, one line, with what to fix.
        let unreadable = try #require(await helper.reloadFailing("scrolloff.toml line 4: upstreams: “9.9.9” is not an address"))
        #expect(unreadable.failure?.contains("line 4") == true)
        #expect(helper.log.lines.contains {
            $0.hasPrefix("error configuration not reloaded") && $0.contains("line 4") && $0.contains("reload again")
        }, "\(helper.log.lines)")

        // The file parses but one value is out of range: nothing of it applies, not even the valid parts.
        let invalid = try #require(await helper.reload { c in
            c.upstreams = [second.hostPort]
            c.blockingMode = .refused
            c.blockedTTL = 30
        })
        #expect(invalid.failure?.contains("blocked TTL 30") == true, "\(String(describing: invalid.failure))")
        #expect(invalid.applied.isEmpty)

        #expect(try await helper.query("still.test") == "198.51.100.1\n", "the old upstream answers")
        let blocked = try await helper.query("blocked.test", ["+noall", "+answer"])
        #expect(blocked.contains("0.0.0.0"), "the old blocking mode answers")
        #expect(Self.ttl(blocked, type: "A") == 10)
    }

    @Test func a_rate_limit_from_a_reload_refuses_a_client_beyond_its_burst() async throws {
        let upstream = try await UpstreamResolver(answering: "198.51.100.1")
        defer { upstream.stop() }
        let helper = try await Self.helperBlocking(upstream: upstream)
        defer { Task { await helper.stop() } }
        let report = try #require(await helper.reload { c in c.rateLimit = RateLimit(queriesPerSecond: 1, burst: 3) })
        #expect(report.applied == ["dns.rate_limit"])
        // Ten questions from one dig process, milliseconds apart: three tokens, then REFUSED (the
        // exact arithmetic of the bucket is tested with a hand-moved clock in RateLimitTests).
        let names = (1...10).map { "q\($0).blocked.test" }
        let arguments = ["@127.0.0.1", "-p", "\(helper.port)", "+tries=1", "+time=2", "+noall", "+comments"] + names
        let output = try await run("/usr/bin/dig", arguments).stdout
        let statuses = output.split(separator: "\n").compactMap { line -> String? in
            guard let range = line.range(of: "status: ") else { return nil }
            return String(line[range.upperBound...].prefix { $0 != "," })
        }
        #expect(statuses.count == 10, "\(output)")
        #expect(statuses.prefix(3) == ["NOERROR", "NOERROR", "NOERROR"], "the burst is answered")
        #expect(statuses.last == "REFUSED", "\(statuses)")
        #expect(try await helper.query("other.test", source: "127.0.0.2") == "198.51.100.1\n", "another client has its own budget")
    }

    @Test func profiles_from_the_configuration_are_listed_and_route_clients_by_network() async throws {
        let upstream = try await UpstreamResolver(answering: "198.51.100.1")
        defer { upstream.stop() }
        let helper = try await ReloadableHelper(upstream: upstream) { c, _ in
            c.profiles = [ProfileSettings(name: "kids", clientCIDRs: ["127.0.0.2/32"], timeZoneID: "UTC")]
        }
        defer { Task { await helper.stop() } }

        let listed = try await cli(["profile", "list", "--json"], socket: helper.socket)
        #expect(listed.status == 0, "\(listed)")
        #expect(listed.stdout.contains("kids") && listed.stdout.contains("127.0.0.2/32"), "\(listed.stdout)")
        let block = try await cli(["block", "instagram", "--profile", "kids"], socket: helper.socket)
        #expect(block.status == 0, "\(block)")
        #expect(try await helper.query("www.instagram.com", source: "127.0.0.2") == "0.0.0.0\n", "a kids device is blocked")
        #expect(try await helper.query("www.instagram.com", source: "127.0.0.1") == "198.51.100.1\n", "the default profile is not")

        // Taking the device out of the profile would loosen it while its new block's cooldown runs: held back.
        let loosen = try #require(await helper.reload { c in
            c.profiles = [ProfileSettings(name: "kids", clientCIDRs: ["127.0.0.3/32"], timeZoneID: "UTC")]
        })
        #expect(loosen.failure == nil)
        #expect(loosen.heldBack.first?.contains("127.0.0.2/32 taken out") == true, "\(loosen.heldBack)")
        #expect(try await helper.query("www.instagram.com", source: "127.0.0.2") == "0.0.0.0\n", "still in the kids profile")

        // Adding a device only tightens: it applies at once, in DNS and in `profile list`.
        let widen = try #require(await helper.reload { c in
            c.profiles = [ProfileSettings(name: "kids", clientCIDRs: ["127.0.0.2/32", "127.0.0.3/32"], timeZoneID: "UTC")]
        })
        #expect(widen.applied == ["profiles"])
        #expect(widen.heldBack.isEmpty)
        #expect(try await helper.query("www.instagram.com", source: "127.0.0.3") == "0.0.0.0\n")
        let relisted = try await cli(["profile", "list", "--json"], socket: helper.socket)
        #expect(relisted.stdout.contains("127.0.0.3/32"), "\(relisted.stdout)")
    }

    @Test func list_sources_from_the_configuration_are_fetched_blockable_and_removed_only_in_the_file() async throws {
        let upstream = try await UpstreamResolver(answering: "198.51.100.1")
        defer { upstream.stop() }
        let helper = try await ReloadableHelper(upstream: upstream)
        defer { Task { await helper.stop() } }
        let listPath = helper.directory + "/doomscroll.txt"
        try "# a plain list\nfeed.test\nreels.test\n".write(toFile: listPath, atomically: true, encoding: .utf8)

        let report = try #require(await helper.reload { c in
            c.listSources = [ConfiguredListSource(name: "doomscroll", url: "file://" + listPath)]
        })
        #expect(report.applied == ["lists.source"])
        #expect(try await eventually {
            try await cli(["lists", "list"], socket: helper.socket).stdout.contains("doomscroll")
        })
        // `lists list` says where the list comes from, in words and in JSON.
        let shown = try await cli(["lists", "list"], socket: helper.socket)
        #expect(shown.stdout.contains("from \(helper.start.paths.configFile): change or remove it there"), "\(shown)")
        let json = try await cli(["lists", "list", "--json"], socket: helper.socket)
        #expect(json.stdout.contains("\"defined_in\" : \"\(helper.start.paths.configFile)\"")
                    || json.stdout.contains("\"defined_in\":\"\(helper.start.paths.configFile)\""), "\(json)")
        let block = try await cli(["block", "doomscroll"], socket: helper.socket)
        #expect(block.status == 0, "\(block)")
        #expect(try await eventually { try await helper.query("www.feed.test") == "0.0.0.0\n" }, "the file's list blocks once fetched")
        #expect(try await helper.query("elsewhere.test") == "198.51.100.1\n")

        let remove = try await cli(["lists", "rm", "doomscroll"], socket: helper.socket)
        #expect(remove.status != 0)
        #expect(remove.stderr.contains("defined in \(helper.start.paths.configFile); remove it there"), "\(remove)")
    }

    // MARK: the file is held to the CLI's rules (SPEC §1, §3)

    @Test func a_list_source_on_a_blocked_host_refuses_the_whole_reload_and_the_host_stays_blocked() async throws {
        let upstream = try await UpstreamResolver(answering: "198.51.100.1")
        let second = try await UpstreamResolver(answering: "198.51.100.2")
        defer { upstream.stop(); second.stop() }
        let helper = try await ReloadableHelper(upstream: upstream)
        defer { Task { await helper.stop() } }
        let block = try await cli(["block", "instagram"], socket: helper.socket)
        #expect(block.status == 0, "\(block)")
        #expect(try await helper.query("www.instagram.com") == "0.0.0.0\n")

        let report = try #require(await helper.reload { c in
            c.upstreams = [second.hostPort]
            c.listSources = [ConfiguredListSource(name: "reels", url: "https://www.instagram.com/x")]
        })
        let failure = try #require(report.failure)
        #expect(failure.contains("lists.source[1].url is \"https://www.instagram.com/x\""), "\(failure)")
        #expect(failure.contains("www.instagram.com") && failure.contains("belongs to instagram"), "\(failure)")
        #expect(failure.contains("Use a URL on another host"), "\(failure)")
        #expect(report.applied.isEmpty)

        // Nothing of the file applied: the host is not allowed, the list is not there, the old upstream answers.
        #expect(try await helper.query("www.instagram.com") == "0.0.0.0\n")
        #expect(!(try await cli(["lists", "list"], socket: helper.socket).stdout.contains("reels")))
        #expect(try await helper.query("other.test") == "198.51.100.1\n")
    }

    @Test func a_list_source_on_a_blocked_host_stops_start_with_an_error_naming_the_key() async throws {
        let upstream = try await UpstreamResolver(answering: "198.51.100.1")
        defer { upstream.stop() }
        let directory = try makeTemporaryDirectory()
        defer { try? FileManager.default.removeItem(atPath: directory) }
        var paths = RuntimePaths.defaults(isRoot: false, environment: ["HOME": directory])
        paths.stateDirectory = directory + "/state"
        paths.controlSocket = directory + "/ctl.sock"
        var configuration = HelperConfiguration(
            paths: paths, listen: [HostPort(host: "127.0.0.1", port: try freeLoopbackPort())], upstreams: [upstream.hostPort],
            eventLoops: 1)
        configuration.catalogPath = ReloadableHelper.catalog
        configuration.defaultProfile = ProfileSettings(name: "default", timeZoneID: "UTC")
        configuration.listSources = [ConfiguredListSource(name: "reels", url: "https://www.instagram.com/x")]
        let log = CapturedLog()
        await #expect {
            try await HelperMain.run(configuration, logger: log.logger())
        } throws: { error in
            let text = "\(error)"
            return text.contains("lists.source[1].url") && text.contains("www.instagram.com") && text.contains("another host")
        }
    }

    @Test func a_new_url_for_a_list_a_block_holds_is_held_back_and_the_old_copy_keeps_blocking() async throws {
        let upstream = try await UpstreamResolver(answering: "198.51.100.1")
        defer { upstream.stop() }
        let helper = try await ReloadableHelper(upstream: upstream)
        defer { Task { await helper.stop() } }
        let oldPath = helper.directory + "/old.txt", newPath = helper.directory + "/new.txt"
        try "feed.test\n".write(toFile: oldPath, atomically: true, encoding: .utf8)
        try "other.test\n".write(toFile: newPath, atomically: true, encoding: .utf8)
        let added = try await cli(["lists", "add", "file://" + oldPath, "--name", "doom"], socket: helper.socket)
        #expect(added.status == 0, "\(added)")
        let block = try await cli(["block", "doom"], socket: helper.socket)
        #expect(block.status == 0, "\(block)")
        #expect(try await eventually { try await helper.query("www.feed.test") == "0.0.0.0\n" })

        // The block's cooldown runs: swapping the URL would replace the copy and open feed.test.
        // A second reload of the same file asks again: still held, and nothing else changes.
        for (round, applied) in [(1, ["lists.source"]), (2, [])] {
            let report = try #require(await helper.reload { c in
                c.listSources = [ConfiguredListSource(name: "doom", url: "file://" + newPath)]
            })
            #expect(report.failure == nil)
            // The first time the file takes the list over (defined there now), with its old URL.
            #expect(report.applied == applied, "round \(round)")
            let held = try #require(report.heldBack.first, "\(report)")
            #expect(held.contains("list doom: lists.source[1].url \"file://\(newPath)\" waits until 20"), "\(held)")
            #expect(held.contains("keeps \"file://\(oldPath)\""), "\(held)")
        }
        let updated = try await cli(["lists", "update", "doom"], socket: helper.socket)
        #expect(updated.status == 0, "\(updated)")
        let listed = try await cli(["lists", "list", "--json"], socket: helper.socket)
        #expect(listed.stdout.contains(oldPath) && !listed.stdout.contains(newPath), "\(listed.stdout)")
        #expect(try await helper.query("www.feed.test") == "0.0.0.0\n", "the old copy still blocks")
        #expect(try await helper.query("www.other.test") == "198.51.100.1\n")
        // The file names the list now, so `lists rm` sends the person to the file.
        let remove = try await cli(["lists", "rm", "doom"], socket: helper.socket)
        #expect(remove.stderr.contains("defined in"), "\(remove)")
    }

    @Test func a_new_url_for_a_list_no_rule_holds_applies_and_is_fetched() async throws {
        let upstream = try await UpstreamResolver(answering: "198.51.100.1")
        defer { upstream.stop() }
        let helper = try await ReloadableHelper(upstream: upstream)
        defer { Task { await helper.stop() } }
        let oldPath = helper.directory + "/old.txt", newPath = helper.directory + "/new.txt"
        try "feed.test\n".write(toFile: oldPath, atomically: true, encoding: .utf8)
        try "other.test\n".write(toFile: newPath, atomically: true, encoding: .utf8)
        let added = try await cli(["lists", "add", "file://" + oldPath, "--name", "doom"], socket: helper.socket)
        #expect(added.status == 0, "\(added)")

        let report = try #require(await helper.reload { c in
            c.listSources = [ConfiguredListSource(name: "doom", url: "file://" + newPath)]
        })
        #expect(report.applied == ["lists.source"])
        #expect(report.heldBack.isEmpty)
        #expect(try await eventually {
            try await cli(["lists", "list", "--json"], socket: helper.socket).stdout.contains(newPath)
        })
    }

    /// Two reloads asked at once (a SIGHUP while a `ReloadHandle` reload runs) read two files and
    /// apply them one after the other: the second sees what the first put in force.
    @Test func two_reloads_at_once_apply_in_order_and_the_later_file_wins() async throws {
        let upstream = try await UpstreamResolver(answering: "198.51.100.1")
        defer { upstream.stop() }
        let helper = try await Self.helperBlocking(upstream: upstream)
        defer { Task { await helper.stop() } }
        var first = helper.start
        first.blockedTTL = 3
        // Not a profile: the block above is in its cooldown, so a profile taking a device out of
        // the default one would be held back (a loosening, SPEC §3), not applied.
        first.cache = CacheConfiguration(capacity: 500)
        var second = first
        second.blockingMode = .nxdomain
        helper.next.queued.withLock { $0 = [first, second] }

        async let one = helper.handle.reload()
        async let two = helper.handle.reload()
        let reports = [try #require(await one), try #require(await two)]
        #expect(reports.allSatisfy { $0.failure == nil })
        // Whichever ran first read the first file; the other saw its TTL and cache already in force.
        #expect(Set(reports.map { Set($0.applied) }) == [["dns.blocked_ttl", "dns.cache"], ["dns.blocking_mode"]], "\(reports)")

        let blocked = try await helper.query("blocked.test", ["+noall", "+comments", "+authority"])
        #expect(blocked.contains("status: NXDOMAIN"), "\(blocked)")
        #expect(Self.ttl(blocked, type: "SOA") == 3, "\(blocked)")
    }
}

/// The log level a reload changes reaches loggers the services copied at start.
@Suite
struct LiveLogLevelTests {
    @Test func a_new_level_applies_to_every_copy_of_the_logger() {
        let log = CapturedLog()
        let level = LiveLogLevel(.info)
        let logger = level.logger(over: log.logger())
        let copy = logger // as a service holds it
        copy.debug("hidden at info")
        copy.info("shown at info", metadata: ["list.name": "x"])
        level.set(.debug)
        copy.debug("shown at debug")
        level.set(.error)
        logger.warning("hidden at error")
        #expect(log.lines == ["info shown at info", "debug shown at debug"])
    }
}
}
