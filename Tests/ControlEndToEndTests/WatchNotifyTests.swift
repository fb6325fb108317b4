#if canImport(Glibc)
import Glibc
#endif
import ControlAPI
import Enforcement
import Engine
import Foundation
import ScrollOffCore
import Store
import Testing

extension ControlEndToEnd {
/// `scrolloff watch --notify` against a real session bus (Debian's `dbus-daemon --session`): the
/// calls to `org.freedesktop.Notifications.Notify` that `notify-send` makes are read back from
/// `dbus-monitor`. Something must own the name for `notify-send` to succeed: a few lines of
/// python3-dbus that answer `Notify` with an id (it checks nothing; the monitor's capture is
/// what the test reads).
@Suite
struct WatchNotifyTests {
    static let notificationOwner = """
        import dbus, dbus.service, dbus.mainloop.glib
        from gi.repository import GLib
        dbus.mainloop.glib.DBusGMainLoop(set_as_default=True)
        class Owner(dbus.service.Object):
            count = 0
            @dbus.service.method("org.freedesktop.Notifications", in_signature="susssasa{sv}i", out_signature="u")
            def Notify(self, app, replaces, icon, summary, body, actions, hints, timeout):
                Owner.count += 1
                return Owner.count
            @dbus.service.method("org.freedesktop.Notifications", out_signature="as")
            def GetCapabilities(self):
                return ["body"]
            @dbus.service.method("org.freedesktop.Notifications", out_signature="ssss")
            def GetServerInformation(self):
                return ("owner", "scrolloff-test", "1", "1.2")
        name = dbus.service.BusName("org.freedesktop.Notifications", dbus.SessionBus())
        Owner(dbus.SessionBus(), "/org/freedesktop/Notifications")
        print("owned", flush=True)
        GLib.MainLoop().run()
        """

    /// A child process, killed and reaped when the test ends.
    final class Background: @unchecked Sendable {
        let process = Process()
        let outputPath: String

        /// - Parameter uid: run as this user (`setpriv`, no groups) rather than as the test.
        init(_ executable: String, _ arguments: [String], environment: [String: String], output: String, uid: UInt32? = nil) throws {
            outputPath = output
            FileManager.default.createFile(atPath: output, contents: nil)
            if let uid {
                process.executableURL = URL(fileURLWithPath: "/usr/bin/setpriv")
                process.arguments = ["--reuid=\(uid)", "--regid=\(uid)", "--clear-groups", executable] + arguments
            } else {
                process.executableURL = URL(fileURLWithPath: executable)
                process.arguments = arguments
            }
            process.environment = environment
            process.standardInput = FileHandle.nullDevice
            let handle = try FileHandle(forWritingTo: URL(fileURLWithPath: output))
            process.standardOutput = handle
            process.standardError = handle
            try process.run()
        }

        var output: String { (try? String(contentsOfFile: outputPath, encoding: .utf8)) ?? "" }

        func waitFor(_ text: String, seconds: Double = 10) async throws {
            let deadline = ContinuousClock.now + .seconds(seconds)
            while !output.contains(text) {
                guard ContinuousClock.now < deadline else {
                    throw POSIXFailure(operation: "waiting for “\(text)” from \(process.executableURL?.lastPathComponent ?? "?"): \(output)", code: 0)
                }
                try await Task.sleep(for: .milliseconds(50))
            }
        }

        /// SIGKILL: the test runner's children may inherit SIGTERM ignored, and none of these has anything to save.
        func stop() {
            if process.isRunning { kill(process.processIdentifier, SIGKILL) }
            process.waitUntilExit()
        }
    }

    /// Who runs `scrolloff watch --notify` and its session bus: root, or a person of the
    /// household in their own desktop session (a member of the profile this machine, 127.0.0.1,
    /// belongs to; no groups, as `setpriv` runs them), the way the user unit runs it.
    enum Watcher: String, CaseIterable, Sendable, CustomTestStringConvertible {
        case root
        case member
        var testDescription: String { rawValue }
        /// `nobody`: dbus-daemon wants a password-database entry for its user, which 400xx lack.
        static let memberUID: UInt32 = 65534
        var uid: UInt32? { self == .member ? Self.memberUID : nil }
        /// The profile this machine's urges and the test's commands act on.
        var profile: [String] { self == .member ? ["--profile", "desk"] : [] }
    }

    @Test(.timeLimit(.minutes(2)), arguments: Watcher.allCases)
    func watch_notify_tells_of_a_curfew_a_grant_ending_a_request_answered_and_an_urge_here_on_the_session_bus(_ watcher: Watcher) async throws {
        let server = try await EngineServer(socketMode: 0o666, directoryMode: 0o755)
        let scratch = try makeTemporaryDirectory(mode: 0o755)
        var children: [Background] = []
        defer {
            for child in children.reversed() { child.stop() }
            try? FileManager.default.removeItem(atPath: scratch)
            Task { await server.stop() }
        }
        if let uid = watcher.uid {
            // The member's bus socket and script live in a folder of theirs; this machine is their profile's.
            #expect(chown(scratch, uid, uid) == 0)
            try await server.engine.applyConfiguredProfiles(
                default: ProfileSettings(name: "default", timeZoneID: "UTC", preset: .strict),
                profiles: [ProfileSettings(name: "desk", clientCIDRs: ["127.0.0.1/32"], timeZoneID: "UTC", preset: .strict,
                                           ownerUIDs: [40011], memberUIDs: [uid])])
        }
        let profile = watcher.profile
        let address = "unix:path=\(scratch)/bus"
        let bus = try Background("/usr/bin/dbus-daemon", ["--session", "--nofork", "--print-address=1", "--address=\(address)"],
                                 environment: ["PATH": "/usr/bin:/bin"], output: scratch + "/bus.out", uid: watcher.uid)
        children.append(bus)
        try await bus.waitFor("unix:path=")
        let session = ["PATH": "/usr/bin:/bin", "DBUS_SESSION_BUS_ADDRESS": address, "HOME": "/tmp", "NO_COLOR": "1", "TZ": "UTC"]
        let monitor = try Background("/usr/bin/dbus-monitor", ["--address", address, "interface='org.freedesktop.Notifications',member='Notify'"],
                                     environment: session, output: scratch + "/monitor.out", uid: watcher.uid)
        children.append(monitor)
        try await monitor.waitFor("NameLost")
        let ownerScript = scratch + "/owner.py"
        try Self.notificationOwner.write(toFile: ownerScript, atomically: true, encoding: .utf8)
        chmod(ownerScript, 0o644)
        let owner = try Background("/usr/bin/python3", [ownerScript], environment: session, output: scratch + "/owner.out", uid: watcher.uid)
        children.append(owner)
        try await owner.waitFor("owned")

        #expect(try await server.cli(["block", "instagram", "reddit"] + profile).status == 0)
        #expect(try await server.cli(["plan", "add", "--when", "when bored", "--then", "stretch"] + profile).status == 0)
        let watch = try Background(scrolloffBinary, ["watch", "--notify", "--socket", server.socketPath], environment: session,
                                   output: scratch + "/watch.out", uid: watcher.uid)
        children.append(watch)
        try await EventStreamVerbTests.waitForReaders(server, 1)

        // A grant that ends in 65 s: told of when a minute is left.
        let use = try await server.cli(["use", "reddit", "--for", "65s"] + profile)
        #expect(use.status == 0, "\(use)")
        // A request for time, answered.
        #expect(try await server.cli(["ask", "10m", "--note", "homework done"] + profile).status == 0)
        #expect(try await server.cli(["requests", "approve", "1", "--note", "well done"] + profile).status == 0)
        // An urge from this machine (127.0.0.1) met by the block on instagram.
        let decision = try await Self.decide(server, "www.instagram.com")
        server.engine.recordUrge(decision, enforcement: server.engine.box.enforcement, client: ClientIP("127.0.0.1")!, now: await server.engine.trustedNow())
        _ = try await server.engine.events()
        try await monitor.waitFor("A request for time")
        try await monitor.waitFor("Your request for time was answered")
        try await monitor.waitFor("instagram is blocked")
        try await monitor.waitFor("reddit closes in 1 minute", seconds: 15)

        // A curfew at 12:11 on this Wednesday (the engine's day starts at noon): at 12:01 the
        // helper writes its reminder, at the timer's next tick.
        #expect(try await server.cli(["schedule", "add", "night", "--from", "12:11", "--to", "13:00", "--days", "wed", "--curfew",
                                      "--entries", "tiktok"] + profile).status == 0)
        server.time.shift(.seconds(70))
        try await server.engine.tick()
        try await monitor.waitFor("Curfew in 10 minutes")
        let calls = monitor.output
        // A member's bypass names their profile: without it the CLI would act on the default one.
        let peek = watcher == .member ? "`scrolloff peek instagram --profile desk` (" : "`scrolloff peek instagram` ("
        #expect(calls.contains("your plan: when bored, stretch") && calls.contains(peek), "\(calls)")
        #expect(calls.contains("string \"Scroll Off\""), "the app name is ours: \(calls)")
        // One Notify call per moment: the urge once, the grant's minute once.
        #expect(calls.components(separatedBy: "instagram is blocked").count - 1 == 2, "summary and body once each: \(calls)")
        #expect(calls.components(separatedBy: "reddit closes in 1 minute").count - 1 == 1, "\(calls)")
        #expect(watch.process.isRunning, "\(watch.output)")
        #expect(!watch.output.contains("could not be shown"), "\(watch.output)")
    }

    static func decide(_ server: EngineServer, _ name: String) async throws -> EnforcementDecision {
        let now = await server.engine.trustedNow()
        var wire: [UInt8] = []
        for label in name.split(separator: ".") {
            wire.append(UInt8(label.utf8.count))
            wire.append(contentsOf: label.utf8)
        }
        wire.append(0)
        let enforcement = server.engine.box.enforcement
        let client = ClientIP("127.0.0.1")!
        let decision = wire.withUnsafeBytes { enforcement.decide(wire: $0, client: client, now: now) }
        #expect(decision.blocked && decision.managed, "\(name) should be blocked")
        return decision
    }
}
}
