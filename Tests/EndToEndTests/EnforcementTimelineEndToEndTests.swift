import Foundation
import Testing

/// Enforcement at every instant (SPEC §3) through the real helper and real `dig`: a window
/// edge or a grant end bites at its instant even when the engine's timer is late or the state disk
/// is full, and the books catch up with the exact seconds once writes succeed again.
///
/// The real-clock cases wait for the next whole minute (schedules are HH:MM), up to about 2 min;
/// Swift Testing runs them in parallel with each other and with the rest of the suite.
@Suite struct EnforcementTimelineEndToEndTests {
    static let instagram = "www.instagram.com"
    static let real = "10.20.30.40"

    /// When a name turned blocked, as probes see it: `lastOpenSent` is when the last probe that
    /// still got the real address was sent (nil: none did).
    struct Flip {
        var lastOpenSent: Date?

        /// Seconds after `edge` that a query still got the real address: a lower bound of how
        /// late the rule applied. The time the first blocked answer came back would add the
        /// probe's own run time (a `dig` started on a loaded machine), which made a full suite
        /// run on 2026-11-25 measure 1.0015 s.
        func openAfter(_ edge: Date) -> TimeInterval {
            lastOpenSent.map { $0.timeIntervalSince(edge) } ?? -.infinity
        }
    }

    /// Polls `dig` every 100 ms until the name is blocked or `deadline` passes.
    static func firstBlocked(_ port: Int, until deadline: Date) throws -> Flip? {
        var lastOpenSent: Date?
        while Date() < deadline {
            let sent = Date()
            if try shortA(port, instagram) == "0.0.0.0" { return Flip(lastOpenSent: lastOpenSent) }
            lastOpenSent = sent
            usleep(100_000)
        }
        return nil
    }

    /// Sleeps until `instant` (no-op when it passed).
    static func sleep(until instant: Date) {
        let left = instant.timeIntervalSinceNow
        if left > 0 { usleep(useconds_t(left * 1_000_000)) }
    }

    /// The TTL of the first answer record of `dig +noall +answer`.
    static func answerTTL(_ port: Int) throws -> Int? {
        let line = try dig(port, ["+noall", "+answer", instagram, "A"]).split(separator: "\n").first
        return line.flatMap { $0.split(whereSeparator: { $0 == " " || $0 == "\t" }).dropFirst().first.flatMap { Int($0) } }
    }

    static func wireDate(_ text: String) -> Date? {
        (try? Date(text, strategy: Date.ISO8601FormatStyle(includingFractionalSeconds: true)))
            ?? (try? Date(text, strategy: Date.ISO8601FormatStyle()))
    }

    /// SPEC §3: under `faketime -f "@2026-11-23 22:59:40"` the 23:00 curfew showed in `status` while
    /// DNS kept the real address with TTL 1 past the edge. The helper's clocks are all faked, so its
    /// timer cannot be trusted to fire at the edge; the snapshot's timeline must flip by itself.
    @Test func curfew_at_2300_under_faketime_blocks_within_a_second_of_the_edge() throws {
        let scratch = try Scratch()
        let upstream = try Dnsmasq(scratch: scratch)
        let helper = try RestartableHelper(scratch: scratch, upstream: upstream.port,
                                           environment: FakeClock.allClocks(startingAt: "2026-11-23 22:59:40"))
        let added = try helper.cli(["schedule", "add", "night", "--from", "23:00", "--to", "07:00", "--days", "mon",
                                    "--curfew", "--entries", "instagram"])
        #expect(added.exitCode == 0, "\(added)")
        // Where 23:00 falls on the test's own (real) clock: the helper's "now" read just now.
        let status = try helper.cli(["status", "--json"])
        let nowText = try #require(try jsonObject(status.output)["now"] as? String, "\(status)")
        let helperNow = try #require(Self.wireDate(nowText), "\(status)")
        let edge = Date().addingTimeInterval(FakeClockEdge.seconds("2026-11-23 23:00:00") - helperNow.timeIntervalSince1970)
        #expect(edge.timeIntervalSinceNow > 5, "the helper took too long to start; the edge is at \(edge)")

        #expect(try shortA(helper.port, Self.instagram) == Self.real)
        // Before the edge the real answer lives no longer than the seconds left to it (SPEC §9).
        let ttl = try #require(try Self.answerTTL(helper.port))
        #expect(Double(ttl) <= edge.timeIntervalSinceNow + 1, "TTL \(ttl) s outlives the curfew edge")

        Self.sleep(until: edge.addingTimeInterval(-1.5))
        #expect(try shortA(helper.port, Self.instagram) == Self.real, "blocked before the edge")
        let flip = try #require(try Self.firstBlocked(helper.port, until: edge.addingTimeInterval(5)), "still open 5 s after the edge")
        #expect(flip.openAfter(edge) < 1.0, "a query sent \(flip.openAfter(edge)) s after the edge got the real address")
        let now = try helper.cli(["status", "--json"])
        #expect(now.output.contains("\"curfew\""), "\(now)")
    }

    /// SPEC §3: with the state dir on a full 4 MiB tmpfs, a block window starting at the next
    /// minute never blocked in DNS (the timer only published after a successful commit). On the
    /// real clock.
    @Test func full_state_disk_a_block_window_at_the_next_minute_blocks_on_time_and_doctor_says_writes_fail() throws {
        let scratch = try Scratch()
        let disk = try SmallDisk(at: "\(scratch.path)/state")
        defer { disk.unmount() }
        let upstream = try Dnsmasq(scratch: scratch)
        let helper = try RestartableHelper(scratch: scratch, upstream: upstream.port)
        defer { helper.stop() }

        let (from, edge) = WallMinute.next()
        let to = WallMinute.text(edge.addingTimeInterval(30 * 60))
        let added = try helper.cli(["schedule", "add", "work", "--from", from, "--to", to, "--entries", "instagram"])
        #expect(added.exitCode == 0, "\(added)")
        #expect(try shortA(helper.port, Self.instagram) == Self.real)
        try disk.fill()

        Self.sleep(until: edge.addingTimeInterval(-1.5))
        #expect(try shortA(helper.port, Self.instagram) == Self.real, "blocked before the window")
        let flip = try #require(try Self.firstBlocked(helper.port, until: edge.addingTimeInterval(5)), "still open 5 s into the window")
        #expect(flip.openAfter(edge) < 1.0, "a query sent \(flip.openAfter(edge)) s after the window started got the real address")

        // The timer's write at the edge failed: said once, not once a second, and `doctor` shows it.
        let failing = try Poll.until(seconds: 10) { helper.child.stderr.contains("cannot write the state") }
        #expect(failing, "no write failure logged: \(helper.child.stderr)")
        usleep(3_000_000)
        let log = helper.child.stderr
        #expect(log.components(separatedBy: "cannot write the state").count - 1 == 1, "\(log)")
        #expect(!log.contains("timer work failed"), "\(log)")
        let doctor = try helper.cli(["doctor", "--json"])
        #expect(doctor.output.contains("state writes failing for"), "\(doctor)")
        #expect(try shortA(helper.port, Self.instagram) == "0.0.0.0")

        // Space comes back: the books are written and doctor passes the database check again.
        disk.free()
        let recovered = try Poll.until(seconds: 20) { helper.child.stderr.contains("state writes succeed again") }
        #expect(recovered, "\(helper.child.stderr)")
        let after = try helper.cli(["doctor", "--json"])
        #expect(!after.output.contains("state writes failing"), "\(after)")
    }

    /// SPEC §4: `scrolloff use` with the disk full kept the entry open 62 s past a balance of 0, and
    /// those seconds were never charged. The spend's end is known when it starts: DNS blocks at that
    /// instant, and once space is back the ledger holds exactly the 120 s of starter credit spent.
    @Test func full_state_disk_a_spend_closes_at_zero_and_the_ledger_catches_up_exactly() throws {
        let scratch = try Scratch()
        let disk = try SmallDisk(at: "\(scratch.path)/state")
        defer { disk.unmount() }
        let upstream = try Dnsmasq(scratch: scratch)
        let helper = try RestartableHelper(scratch: scratch, upstream: upstream.port)
        defer { helper.stop() }

        #expect(try helper.cli(["block", "instagram"]).exitCode == 0)
        let use = try helper.cli(["use", "instagram", "--json"])
        #expect(use.exitCode == 0, "\(use)")
        let grant = try #require(try jsonObject(use.output)["grant"] as? [String: Any], "\(use)")
        let end = try #require((grant["end"] as? String).flatMap(Self.wireDate), "\(use)")
        #expect(try shortA(helper.port, Self.instagram) == Self.real)
        try disk.fill()

        Self.sleep(until: end.addingTimeInterval(-1.5))
        #expect(try shortA(helper.port, Self.instagram) == Self.real, "closed before the credit ran out")
        let flip = try #require(try Self.firstBlocked(helper.port, until: end.addingTimeInterval(5)), "still open 5 s after 0")
        #expect(flip.openAfter(end) < 1.0, "a query sent \(flip.openAfter(end)) s after the balance reached 0 got the real address")
        let failing = try Poll.until(seconds: 10) { helper.child.stderr.contains("cannot write the state") }
        #expect(failing, "the grant end's write should have failed on the full disk: \(helper.child.stderr)")

        disk.free()
        let caughtUp = try Poll.until(seconds: 20) {
            (try? sqlite(helper.database, "SELECT COALESCE(SUM(delta_seconds), 0) FROM ledger WHERE reason = 'spend'")) == "-120"
        }
        #expect(caughtUp, "spend rows: \((try? sqlite(helper.database, "SELECT time, delta_seconds FROM ledger WHERE reason = 'spend'")) ?? "?")")
        // Nothing charged twice: the ledger sums to the balance, 0.
        #expect(try sqlite(helper.database, "SELECT SUM(delta_seconds) FROM ledger") == "0")
        let wallet = try helper.cli(["wallet", "--json"])
        #expect(try jsonObject(wallet.output)["balance_seconds"] as? Int == 0, "\(wallet)")
        #expect(try shortA(helper.port, Self.instagram) == "0.0.0.0")
    }
}

/// A 4 MiB tmpfs mounted on a directory for one test (SPEC §3: faults such as a full disk must not
/// open a rule). Needs root, as `make test` and CI run.
final class SmallDisk: @unchecked Sendable {
    let path: String
    private var mounted = false

    /// - Parameter owner: the user the disk's root belongs to (a helper run as that user); root when nil.
    init(at path: String, owner: uid_t? = nil) throws {
        self.path = path
        try FileManager.default.createDirectory(atPath: path, withIntermediateDirectories: true)
        let ownership = owner.map { ",uid=\($0),gid=\($0)" } ?? ""
        let mount = try runWithStatus("/usr/bin/mount", ["-t", "tmpfs", "-o", "size=4m,mode=0700" + ownership, "tmpfs", path])
        guard mount.exitCode == 0 else { throw HarnessError("mounting a tmpfs on \(path) failed (the test needs root): \(mount)") }
        mounted = true
    }

    /// Fills every free byte with `dd`, which stops with "No space left on device".
    func fill() throws {
        _ = try runWithStatus("/usr/bin/dd", ["if=/dev/zero", "of=\(path)/fill", "bs=64k"])
        let df = try runWithStatus("/usr/bin/df", ["--output=avail", "-B1", path])
        let avail = df.output.split(separator: "\n").last.map { $0.trimmingCharacters(in: .whitespaces) }
        guard avail == "0" else { throw HarnessError("the tmpfs at \(path) still has \(avail ?? "?") bytes free") }
    }

    func free() { try? FileManager.default.removeItem(atPath: "\(path)/fill") }

    func unmount() {
        guard mounted else { return }
        _ = try? runWithStatus("/usr/bin/umount", ["-l", path])
        mounted = false
    }

    deinit { unmount() }
}

enum Poll {
    /// Calls `condition` every 100 ms until it holds or `seconds` pass.
    static func until(seconds: Double, _ condition: () throws -> Bool) rethrows -> Bool {
        let deadline = Date().addingTimeInterval(seconds)
        while Date() < deadline {
            if try condition() { return true }
            usleep(100_000)
        }
        return try condition()
    }
}

/// Wall-clock minutes in UTC (the helper runs with TZ=UTC).
enum WallMinute {
    /// The next whole minute at least 20 s away, as `HH:MM` and as an instant.
    static func next() -> (String, Date) {
        let now = Date().timeIntervalSince1970
        var start = (floor(now / 60) + 1) * 60
        if start - now < 20 { start += 60 }
        let date = Date(timeIntervalSince1970: start)
        return (text(date), date)
    }

    static func text(_ date: Date) -> String {
        var calendar = Calendar(identifier: .gregorian)
        calendar.timeZone = TimeZone(identifier: "UTC") ?? .gmt
        let c = calendar.dateComponents([.hour, .minute], from: date)
        return String(format: "%02d:%02d", c.hour ?? 0, c.minute ?? 0)
    }
}

enum FakeClockEdge {
    static func seconds(_ at: String) -> Double { Double(FakeClock.seconds(at)) }
}
