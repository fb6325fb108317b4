import Foundation
@testable import Helper
import HostsFile
@testable import HostsMode
import Store
import Synchronization
import Testing

/// How hosts mode tells a hand edit of its section from its own rewrites (SPEC §10): by the bytes
/// it left there, never by how many times inotify woke it.
struct HostsSectionEditTests {
    static let left = Array("# BEGIN scrolloff\n0.0.0.0 a.com\n:: a.com\n# END scrolloff\n".utf8)

    static func layout(_ text: String) throws -> HostsLayout { try HostsLayout(parsing: Array(text.utf8)) }
    static func edit(_ file: String, left: [UInt8] = left) throws -> HostsSectionEdit? {
        HostsModeService.edit(found: try layout(file), left: left, path: "/etc/hosts")
    }

    @Test func the_section_as_left_at_the_top_is_no_edit_whatever_the_users_lines() throws {
        #expect(try Self.edit(String(decoding: Self.left, as: UTF8.self) + "10.0.0.9 mine.lan\n") == nil)
        #expect(try Self.edit("127.0.0.1 localhost\n", left: []) == nil, "nothing left, nothing found")
    }

    @Test func lines_taken_out_or_added_are_counted() throws {
        let e = try #require(try Self.edit("# BEGIN scrolloff\n:: a.com\n1.2.3.4 a.com\n5.6.7.8 b.com\n# END scrolloff\n"))
        #expect(e.linesRemoved == 1 && e.linesAdded == 2 && !e.sectionRemoved && !e.moved)
        #expect(e.message.contains("1 line taken out, 2 lines added") && e.message.contains("/etc/hosts"), "\(e.message)")
    }

    @Test func a_deleted_section_and_a_moved_one_are_edits_too() throws {
        let gone = try #require(try Self.edit("127.0.0.1 localhost\n"))
        #expect(gone.sectionRemoved && gone.linesRemoved == 4 && gone.message.contains("was taken out"))
        let moved = try #require(try Self.edit("127.0.0.1 localhost\n" + String(decoding: Self.left, as: UTF8.self)))
        #expect(moved.moved && moved.linesRemoved == 0 && moved.linesAdded == 0 && moved.message.contains("moved below"))
        let written = try #require(try Self.edit("# BEGIN scrolloff\n1.2.3.4 x.com\n# END scrolloff\n", left: []))
        #expect(written.linesAdded == 3 && !written.sectionRemoved)
    }

    @Test func the_payload_is_not_mistaken_for_a_clock_jump() {
        let edit = HostsSectionEdit(file: "/etc/hosts", linesRemoved: 1, linesAdded: 0, sectionRemoved: false, moved: false)
        let event = StoredEvent(edit, at: Fixture.noon)
        #expect(event.kind == .tamper && event.profile == nil && !event.isClockJump)
        #expect(event.payload?.contains("\"source\":\"hostsFile\"") == true)
    }
}

/// The hosts service's wake counts a relative delay on the kernel's clock (SPEC §10).
struct RelativeWakeTimerTests {
    @Test func fires_once_after_the_delay_and_a_new_arming_replaces_the_old_one() async throws {
        let fired = Mutex<[Date]>([])
        let timer = try #require(RelativeWakeTimer { fired.withLock { $0.append(Date()) } })
        defer { timer.stop() }
        let start = Date()
        timer.arm(milliseconds: 10_000)
        timer.arm(milliseconds: 150)
        try await Task.sleep(for: .milliseconds(800))
        let times = fired.withLock { $0 }
        #expect(times.count == 1, "\(times)")
        #expect(times.first.map { $0.timeIntervalSince(start) >= 0.14 } == true, "fired early: \(times)")
        timer.stop()
        timer.arm(milliseconds: 50)
        try await Task.sleep(for: .milliseconds(300))
        #expect(fired.withLock { $0.count } == 1, "a stopped timer fired")
    }
}
