import Foundation
import TestSupport
import Synchronization
import Testing

/// The household page against slow clients and password guessers (SPEC §9a), on the real
/// helper: slow requests from many addresses, a pool full of idle connections, many IPv6 addresses
/// of one /64, and many addresses guessing one owner's password. The clients are
/// `scripts/web/slow_clients.py` (raw sockets, many source addresses) and curl.
@Suite("Household page: slow clients and guessers")
struct HouseholdWebSlowClientEndToEndTests {
    static let script: String = repositoryRoot + "/scripts/web/slow_clients.py"

    /// The JSON object a `slow_clients.py` run printed last.
    static func report(_ output: String) throws -> [String: Any] {
        guard let line = output.split(separator: "\n").last(where: { $0.hasPrefix("{") }),
              let object = try JSONSerialization.jsonObject(with: Data(line.utf8)) as? [String: Any]
        else { throw HarnessError("no report from slow_clients.py: \(output)") }
        return object
    }

    /// A page load with curl from `address`: its status and how long it took.
    static func load(_ helper: HouseholdHelper, from address: String) throws -> (status: Int, seconds: Double) {
        let started = Date()
        let output = try run("/usr/bin/curl", ["-s", "-o", "/dev/null", "-w", "%{http_code}", "--max-time", "10", "--interface", address,
                                               "http://127.0.0.1:\(helper.webPort)/"])
        return (Int(output) ?? 0, Date().timeIntervalSince(started))
    }

    /// 20 addresses × 16 connections (320, more than the pool's 256), each sending its request a
    /// header byte a second and reconnecting when cut, as an attacker would. Another device must
    /// still load the page within a few seconds, and no slow connection may live past the
    /// 5 s whole-request deadline (with room for a loaded machine).
    @Test(.timeLimit(.minutes(2)))
    func twenty_addresses_sending_a_byte_a_second_cannot_keep_another_device_from_the_page_and_are_cut_at_the_deadline() throws {
        let scratch = try Scratch()
        let helper = try HouseholdHelper(scratch: scratch)
        let slow = try Child("/usr/bin/python3", [
            Self.script, "slow", "--host", "127.0.0.1", "--port", "\(helper.webPort)", "--sources", "127.0.0.10-29", "--per-source", "16",
            "--seconds", "14", "--reconnect", "--max-connections", "3000",
        ], scratch: scratch, label: "slow-clients")
        _ = try slow.waitForLine(seconds: 30) { $0.hasPrefix("READY") }
        // The pool is full of slow requests now, and stays full: every cut one reconnects.
        var loads: [(status: Int, seconds: Double)] = []
        for _ in 0..<4 {
            usleep(1_500_000)
            loads.append(try Self.load(helper, from: "127.0.0.2"))
        }
        slow.process.wait()
        let report = try Self.report(slow.stdout)
        for (index, load) in loads.enumerated() {
            #expect(load.status == 200, "load \(index + 1) while the slow clients held the pool: \(load)")
            #expect(load.seconds < 3, "load \(index + 1) took \(load.seconds) s")
        }
        let lifetimes = (report["lifetimes"] as? [Double] ?? []) + (report["still_open"] as? [Double] ?? [])
        #expect(report["opened"] as? Int ?? 0 >= 320, "\(report)")
        // Cut at 5 s after it opened at the latest (a full pool cuts some earlier, for newcomers).
        let longest = lifetimes.max() ?? 0
        #expect(longest < 7.5, "a slow request lived \(longest) s")
        #expect(helper.child.isRunning)
    }

    /// 8 addresses × 32 kept-alive connections fill the 256 slots, the first of them idle longest.
    /// A newcomer is served at once, and the connection dropped for it is that first one.
    @Test(.timeLimit(.minutes(2)))
    func a_full_pool_drops_its_longest_idle_connection_for_a_newcomer() throws {
        let scratch = try Scratch()
        let helper = try HouseholdHelper(scratch: scratch)
        let outcome = try runWithStatus("/usr/bin/python3", [
            Self.script, "idle", "--host", "127.0.0.1", "--port", "\(helper.webPort)", "--sources", "127.0.0.10-17", "--per-source", "32",
            "--newcomer", "127.0.0.2",
        ])
        let report = try Self.report(outcome.output)
        let newcomer = report["newcomer"] as? [String: Any] ?? [:]
        // The whole run must fit in the 5 s deadline, or the deadline rather than the pool closes them.
        #expect(report["fill_seconds"] as? Double ?? 99 < 4, "\(report)")
        #expect(report["filled"] as? Int == 256, "\(report)")
        #expect(newcomer["status"] as? Int == 200, "\(report)")
        #expect(newcomer["seconds"] as? Double ?? 99 < 3, "\(report)")
        #expect(report["first_closed"] as? Bool == true, "the longest idle connection was dropped: \(report)")
        #expect(report["others_closed"] as? Int == 0, "only one was dropped: \(report)")
    }

    /// 40 addresses of one IPv6 /64 are one device: 32 connections between them (the per-device
    /// bound), the 41st address of it is refused, and a device of another /64 is served. In a
    /// network namespace of this test's own (`soweb-PID`), whose loopback holds the addresses.
    @Test(.timeLimit(.minutes(2)))
    func addresses_of_one_ipv6_64_share_one_devices_connections() throws {
        let scratch = try Scratch()
        let namespace = "soweb-\(getpid())"
        _ = try? runWithStatus("/usr/sbin/ip", ["netns", "del", namespace])
        let added = try runWithStatus("/usr/sbin/ip", ["netns", "add", namespace])
        #expect(added.exitCode == 0, "\(added)")
        defer { _ = try? runWithStatus("/usr/sbin/ip", ["netns", "del", namespace]) }
        var setup = [["link", "set", "lo", "up"]]
        // One /64 with 41 addresses (0x10 to 0x37 and 0x99), another /64 with one.
        for last in Array(0x10...0x37) + [0x99] { setup.append(["addr", "add", "fd00:5ce:b::\(String(last, radix: 16))/64", "dev", "lo", "nodad"]) }
        setup.append(["addr", "add", "fd00:5ce:c::1/64", "dev", "lo", "nodad"])
        for step in setup {
            let outcome = try runWithStatus("/usr/sbin/ip", ["-n", namespace] + step)
            try #require(outcome.exitCode == 0, "ip \(step): \(outcome)")
        }
        let helper = try HouseholdHelper(scratch: scratch, wrapper: [.namespace(namespace)], webListen: "[::1]:0")
        let outcome = try runWithStatus("/usr/sbin/ip", [
            "netns", "exec", namespace, "/usr/bin/python3", Self.script, "hold", "--host", "::1", "--port", "\(helper.webPort)",
            "--sources", "fd00:5ce:b::10-37", "--same", "fd00:5ce:b::99", "--other", "fd00:5ce:c::1",
        ])
        let report = try Self.report(outcome.output)
        #expect(report["held"] as? Int == 40, "\(report)")
        #expect(report["closed"] as? Int == 8, "40 addresses of one /64 hold 32 connections, not 40: \(report)")
        #expect(report["same_closed"] as? Bool == true, "\(report)")
        #expect((report["other"] as? [String: Any])?["status"] as? Int == 200, "\(report)")
        helper.child.signal(SIGTERM)
        helper.child.process.wait()
    }

    /// 40 addresses guess one owner's password, 5 tries each (each device's own budget): 200 tries.
    /// With `sign_in_max_delay = "4s"` the name's tries may start at 0, 0, 0, 1, 3, 7, 11, 15, 19 s
    /// (three free, then doubling to the cap), so in the 20 s the guessing lasts at most 9 are
    /// checked (10 with a second's slack); the rest are told how long to wait, numbers first. The
    /// owner, whose right password waits too, then signs in after that wait.
    @Test(.timeLimit(.minutes(3)))
    func forty_addresses_guessing_one_owner_get_a_few_tries_and_the_owner_signs_in_after_the_wait() throws {
        let scratch = try Scratch()
        let helper = try HouseholdHelper(scratch: scratch, ownerPassword: true, configuration: "[web]\nsign_in_max_delay = \"4s\"\n")
        let guessers = (10..<50).map { helper.device("127.0.0.\($0)") }
        let tokens = try guessers.map { try #require(try $0.get("/signin").csrf) }
        let answers = Tally<Int>(), waits = Tally<String>()
        let started = Date()
        // A thread per device, all at once (concurrentPerform would run only as many as there are cores).
        let done = DispatchGroup()
        for index in guessers.indices {
            done.enter()
            Thread {
                defer { done.leave() }
                for guess in 1...5 where Date().timeIntervalSince(started) < 20 {
                    guard let answer = try? guessers[index].post("/signin", [
                        ("csrf", tokens[index]), ("name", HouseholdHelper.ownerName), ("password", "guess \(index)-\(guess)"),
                    ]) else { continue }
                    answers.add(answer.status)
                    if answer.status == 429, answer.body.contains("to wait before signing in") {
                        waits.add(answer.body)
                    }
                }
            }.start()
        }
        #expect(done.wait(timeout: .now() + 90) == .success)
        let statuses = answers.values
        let checked = statuses.filter { $0 == 401 }.count
        #expect(statuses.count == 200, "every try was answered")
        #expect(checked >= 3 && checked <= 10, "\(checked) of \(statuses.count) guesses were checked")
        #expect(statuses.allSatisfy { $0 == 401 || $0 == 429 })
        // Numbers first, and true: the wait, then why.
        let page = try #require(waits.values.first)
        #expect(page.range(of: #"\d+ s to wait before signing in as “nobody” again: \d+ wrong passwords in a row"#, options: .regularExpression) != nil,
                "\(page)")

        // The owner, from a device of their own: held back as long as the name waits, never longer.
        let owner = helper.device("127.0.0.3")
        let token = try #require(try owner.get("/signin").csrf)
        let fields = [("csrf", token), ("name", HouseholdHelper.ownerName), ("password", HouseholdHelper.ownerPassword)]
        var signedIn = try owner.post("/signin", fields)
        if signedIn.status == 429 {
            let wait = try #require(Int(signedIn.header("Retry-After") ?? ""))
            #expect(wait >= 1 && wait <= 4, "Retry-After \(wait)")
            usleep(UInt32(wait) * 1_000_000 + 200_000)
            signedIn = try owner.post("/signin", fields)
        }
        #expect(signedIn.status == 303 && signedIn.header("Location") == "/owner", "\(signedIn)")
    }
}

/// Values gathered from several threads.
final class Tally<Value: Sendable>: Sendable {
    private let state = Mutex<[Value]>([])
    func add(_ value: Value) { state.withLock { $0.append(value) } }
    var values: [Value] { state.withLock { $0 } }
}
