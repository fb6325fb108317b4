import Foundation
#if canImport(Glibc)
import Glibc
#endif
import TestSupport
import Testing

/// The household's lists on two real helpers and one PostgreSQL: which lists exist is shared, each
/// helper downloads its own copy. One pair of helpers for every case (they are slow to start).
extension SharedStoreEndToEndTests {
    @Test func lists_added_locked_and_removed_through_one_helper_hold_on_the_other_within_seconds() throws {
        let scratch = try Scratch()
        let db = try TestPostgres()
        defer { db.stop() }
        let upstream = try Dnsmasq(scratch: scratch)
        // A folder both helpers let members read lists from, and one only an administrator may name.
        let shared = scratch.path + "/shared-lists"
        let admin = scratch.path + "/admin-lists"
        for folder in [shared, admin] { try FileManager.default.createDirectory(atPath: folder, withIntermediateDirectories: true) }
        for (file, text) in [("\(shared)/old.txt", "old1.example\n"), ("\(shared)/social.txt", "doom1.example\ndoom2.example\n"),
                             ("\(shared)/news.txt", "news1.example\n"), ("\(admin)/secret.txt", "secret1.example\n")] {
            try text.write(toFile: file, atomically: true, encoding: .utf8)
            chmod(file, 0o644)
        }
        for folder in [shared, admin] { chmod(folder, 0o755) }
        let lists = "[lists]\nmember_file_folders = [\"\(shared)\"]\n"

        // Before: A alone on SQLite, with a list of its own (its record a file in its state folder).
        let soloConfig = try scratch.file("pg-a-solo.toml", lists)
        let solo = try HelperLaunch(executable: Products.scrolloffDNS, upstreams: [HelperLaunch.loopback(upstream.port)],
                                    stateDirectory: "\(scratch.path)/pg-a-state", controlSocket: "\(scratch.path)/pg-a-solo.sock",
                                    config: soloConfig, environment: ["TZ": "UTC"]).spawn(scratch: scratch, label: "pg-a-solo")
        defer { if solo.isRunning { solo.signal(SIGKILL); solo.process.wait() } }
        try solo.waitForControlSocket()
        let old = try runWithStatus(Products.scrolloff, ["lists", "add", "file://\(shared)/old.txt", "--name", "old", "--socket", "\(scratch.path)/pg-a-solo.sock"])
        #expect(old.exitCode == 0, "\(old)")
        solo.signal(SIGTERM)
        solo.process.wait()

        // Then A on the household's database (same state folder), B beside it.
        let a = try HouseholdNode("pg-a", url: db.socketURL, scratch: scratch, upstream: upstream.port, settings: lists)
        let b = try HouseholdNode("pg-b", url: db.socketURL, scratch: scratch, upstream: upstream.port, settings: lists)
        defer { a.stop(); b.stop() }
        let bLists = "\(scratch.path)/pg-b-state/lists"

        // The upgrade carried A's list into the database, and B downloaded it.
        #expect(within(seconds: 10) { (try? db.query("SELECT name, added_on FROM household_lists")) == "old|pg-a" },
                "A's list from before is not the household's: \((try? db.query("SELECT * FROM household_lists")) ?? "")")
        #expect(within(seconds: 10) { FileManager.default.fileExists(atPath: "\(bLists)/old.list") }, "B never downloaded A's old list")

        // Added (and blocked) through A: B blocks its names within seconds.
        let added = try a.cli(["lists", "add", "file://\(shared)/social.txt", "--name", "doomlist", "--block"])
        #expect(added.exitCode == 0, "\(added)")
        let asked = Date()
        #expect(a.blocks("doom1.example"))
        #expect(within(seconds: 10) { b.blocks("doom2.example") }, "B never blocked the list added through A")
        let took = Date().timeIntervalSince(asked)
        #expect(took < 5, "B blocked the list \(took) s after A added it")

        // Locked: the block's cooldown holds the list on both; B refuses `lists rm` with A's words.
        let refusedA = try a.cli(["lists", "rm", "doomlist"])
        let refusedB = try b.cli(["lists", "rm", "doomlist"])
        #expect(refusedA.exitCode == 1 && refusedB.exitCode == 1, "A: \(refusedA)\nB: \(refusedB)")
        // The same words up to the first number (the two countdowns are read a moment apart).
        #expect(Self.wordsBeforeNumbers(refusedA.output) == Self.wordsBeforeNumbers(refusedB.output) && refusedB.output.contains("doomlist"),
                "A: \(refusedA.output)\nB: \(refusedB.output)")
        #expect(b.blocks("doom1.example"), "the list is still in force on B")

        // Added and removed through A with no rule on it: B drops its copy and the list.
        #expect(try a.cli(["lists", "add", "file://\(shared)/news.txt", "--name", "headlines"]).exitCode == 0)
        #expect(within(seconds: 10) { FileManager.default.fileExists(atPath: "\(bLists)/headlines.list") }, "B never downloaded headlines")
        let removed = try a.cli(["lists", "rm", "headlines"])
        #expect(removed.exitCode == 0, "\(removed)")
        #expect(within(seconds: 10) { !FileManager.default.fileExists(atPath: "\(bLists)/headlines.list") }, "B kept the copy of a removed list")
        #expect(!((try? b.cli(["lists", "list"]).output) ?? "headlines").contains("headlines"))
        #expect(try db.query("SELECT name FROM household_lists ORDER BY name") == "doomlist\nold")

        // An administrator's file on A that B's rules do not let a member name: B does not read it
        // and says why in `lists list` and `doctor`; A blocks it.
        let secret = try a.cli(["lists", "add", "file://\(admin)/secret.txt", "--name", "secret", "--block"])
        #expect(secret.exitCode == 0, "\(secret)")
        #expect(a.blocks("secret1.example"))
        #expect(within(seconds: 10) { ((try? b.cli(["lists", "list"]).output) ?? "").contains("added through the helper pg-a") },
                "B's lists list: \((try? b.cli(["lists", "list"]).output) ?? "")")
        #expect(!FileManager.default.fileExists(atPath: "\(bLists)/secret.list"))
        #expect(!b.blocks("secret1.example"))
        let doctor = try runWithStatus(Products.scrolloff, ["doctor", "--socket", b.controlSocket, "--nsswitch-conf", "/dev/null"])
        #expect(doctor.output.contains("list:secret") && doctor.output.contains("added through the helper pg-a"), "\(doctor)")
    }

    static func wordsBeforeNumbers(_ text: String) -> String { String(text.prefix { !$0.isNumber }) }
}

/// Whether `condition` holds within `seconds`, looked at every 50 ms.
private func within(seconds: Double, _ condition: () -> Bool) -> Bool {
    let deadline = Date().addingTimeInterval(seconds)
    while Date() < deadline {
        if condition() { return true }
        usleep(50_000)
    }
    return condition()
}
