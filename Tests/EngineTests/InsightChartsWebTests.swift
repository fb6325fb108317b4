import ControlAPI
@testable import Engine
import Foundation
@testable import Helper
import Logging
import NIOPosix
import ScrollOffCore
import ServiceLifecycle
import Store
import Synchronization
import Testing

/// SPEC §7: the household page draws the week's figures as inline SVG, with the numbers in
/// words for screen readers, checked over real HTTP (curl) against the real page.
@Suite("Household page charts over HTTP")
struct InsightChartsWebTests {
    @Test func member_page_has_trend_heatmap_and_top_entries_with_their_numbers() async throws {
        let dir = Fixture.temporaryDirectory()
        defer { try? FileManager.default.removeItem(atPath: dir) }
        let engine = try await Fixture.start(dir, TestTimeSource(wall: Fixture.noon)) // Wednesday 2026-11-18 12:00 UTC
        _ = try await engine.block(["instagram"])
        // Tuesday 21:05 and 21:15 instagram; today 08:05 instagram and 09:10 reddit.
        let store = try Store(directory: dir)
        let tuesday = Instant(secondsSince1970: 1_794_873_600)
        var change = StateChange()
        for (t, entry) in [(tuesday + .minutes(21 * 60 + 5), "instagram"), (tuesday + .minutes(21 * 60 + 15), "instagram"),
                           (tuesday + .minutes(32 * 60 + 5), "instagram"), (tuesday + .minutes(33 * 60 + 10), "reddit<b>")] {
            change.append(.appendEvent(StoredEvent(profile: "default", time: t, kind: .urge, entry: EntryID(entry))))
        }
        try store.commit(change, anchor: ClockAnchor(trusted: Fixture.noon, bootNanoseconds: 1, bootID: "seed"))
        // Last Sunday's digest, as the timer writes it.
        var sunday = InsightDay(day: LocalCalendar.Day(year: 2026, month: 11, day: 15))
        sunday.urges = 3
        sunday.resisted = 3
        let digest = HelperEngine.report(.week, profile: "default", days: [sunday], today: sunday.day, calendar: LocalCalendar(identifier: "UTC")!)
        try store.recordOnce(key: WeeklyDigest.key(weekEnding: sunday.day),
                             event: StoredEvent(profile: "default", time: Fixture.noon - .hours(65), kind: .weeklyDigest,
                                                payload: String(decoding: ControlJSON.encode(digest), as: UTF8.self)))

        // The page on a port the kernel picks (a chosen free port was once taken by another test
        // between closing and binding). curl runs on a thread of its own, off the cooperative pool
        // the page renders on, with a generous wait: a loaded full run took minutes to get a task
        // onto that pool.
        let fetched = Mutex("")
        try await WebConnectionTests.withPage(engine: engine) { port in
            let deadline = Date().addingTimeInterval(120)
            var page = ""
            while Date() < deadline {
                page = try Self.curl("http://127.0.0.1:\(port)/")
                if page.contains("<svg") { break }
                Thread.sleep(forTimeInterval: 0.2)
            }
            fetched.withLock { [page] in $0 = page }
        }
        let page = fetched.withLock { $0 }
        #expect(page.contains(#"<svg xmlns="http://www.w3.org/2000/svg" class="chart trend" role="img""#), "\(page)")
        #expect(page.contains(#"data-day="2026-11-17" data-urges="2" data-resisted="2""#))
        #expect(page.contains(#"data-day="2026-11-18" data-urges="2" data-resisted="2""#))
        #expect(page.contains("Tue 2026-11-17: 2 of 2 urges resisted") && page.contains("Mon 2026-11-16: no urges"))
        #expect(page.contains(#"data-hour="21" data-urges="2""#) && page.contains(#"data-hour="8" data-urges="1""#))
        // 8–10 h and 21–23 h hold two each: the stretch that starts at the busier hour (21 h, both) is named.
        #expect(page.contains("Most urges 21–23 h. Urges by hour: 8 h: 1, 9 h: 1, 21 h: 2"))
        #expect(page.contains(#"data-entry="instagram" data-urges="3""#))
        // An entry name is text in the chart, never markup.
        #expect(page.contains("reddit&lt;b&gt;: 1 urge, 1 resisted") && !page.contains("reddit<b>"))
        #expect(page.contains("You resisted 4 of 4 urges this week."))
        #expect(page.contains("<strong>Weekly digest, 2026-11-09 to 2026-11-15</strong><p>You resisted 3 of 3 urges this week.</p>"), "\(page)")
    }

    static func curl(_ url: String) throws -> String {
        let process = Process()
        process.executableURL = URL(fileURLWithPath: "/usr/bin/curl")
        process.arguments = ["-sS", "--max-time", "30", url]
        let out = Pipe()
        process.standardOutput = out
        process.standardError = FileHandle.nullDevice
        try process.run()
        let data = out.fileHandleForReading.readDataToEndOfFile()
        process.waitUntilExit()
        return String(decoding: data, as: UTF8.self)
    }
}
