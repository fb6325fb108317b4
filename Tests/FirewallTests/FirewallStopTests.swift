@testable import Firewall
import Foundation
import Logging
@testable import ServiceKit
import ServiceLifecycle
import Sinkhole
import Testing

/// Which ends of the helper take the firewall table away (SPEC §9b, docs/firewall.md): a stop that
/// was asked for (SIGTERM, `systemctl stop`) does; a helper torn down because one of its parts
/// failed does not, as after a crash, so the bypasses stay closed while systemd restarts it.
///
/// The real `FirewallService` in a `ServiceGroup`, with `nft` run inside a network namespace of
/// the test's own (never the host's tables), deleted at the end whatever happened.
@Suite(.serialized) struct FirewallStopTests {
    /// A network namespace and an `nft` that runs inside it.
    final class Lab: @unchecked Sendable {
        let name = "firewall-stop-" + UUID().uuidString.prefix(8).lowercased()
        let folder = NSTemporaryDirectory() + "scrolloff-firewall-stop-\(UUID().uuidString)"
        var nft: String { folder + "/nft" }

        init() throws {
            try FileManager.default.createDirectory(atPath: folder, withIntermediateDirectories: true)
            try "#!/bin/sh\nexec /usr/sbin/ip netns exec \(name) /usr/sbin/nft \"$@\"\n".write(toFile: nft, atomically: true, encoding: .utf8)
            chmod(nft, 0o755)
            let added = try FirewallRulesetTests.run(["/usr/sbin/ip", "netns", "add", name])
            guard added.0 == 0 else {
                try? FileManager.default.removeItem(atPath: folder)
                throw Failure("ip netns add \(name): \(added.1)")
            }
        }

        var tableExists: Bool { ((try? FirewallRulesetTests.run([nft, "list", "table", "inet", "scrolloff"]))?.0) == 0 }

        /// Polls for the table every 50 ms, for at most 10 s.
        func waitForTable(present: Bool) async -> Bool {
            for _ in 0..<200 {
                if tableExists == present { return true }
                try? await Task.sleep(for: .milliseconds(50))
            }
            return false
        }

        func controller() -> FirewallController {
            var settings = FirewallSettings()
            settings.enabled = true
            settings.resolveDoHNames = false
            let catalog = URL(fileURLWithPath: #filePath).deletingLastPathComponent().deletingLastPathComponent()
                .deletingLastPathComponent().path + "/blocklists"
            return FirewallController(settings: settings, nft: NFTables(executable: nft, folder: folder), listeners: BoundListeners(),
                                      catalogFolder: catalog, logger: Logger(label: "firewall-stop-test"))
        }

        func service(_ controller: FirewallController) -> FirewallService {
            let bound = ChangeSignal()
            bound.notify()
            return FirewallService(controller: controller, listenersBound: bound, listsRefreshed: ChangeSignal(),
                                   record: { _, _ in }, logger: Logger(label: "firewall-stop-test"))
        }

        deinit {
            _ = try? FirewallRulesetTests.run(["/usr/sbin/ip", "netns", "del", name])
            try? FileManager.default.removeItem(atPath: folder)
        }
    }

    struct Failure: Error, CustomStringConvertible {
        var description: String
        init(_ description: String) { self.description = description }
    }

    /// Another part of the helper: fails (throws) once the table is in place, or waits for the stop.
    struct OtherPart: Service {
        let lab: Lab
        let fails: Bool

        func run() async throws {
            guard await lab.waitForTable(present: true) else { throw Failure("the table never came") }
            if fails { throw Failure("a part of the helper failed") }
            try await gracefulShutdown()
        }
    }

    @Test func a_helper_that_ends_because_a_part_failed_leaves_the_table_in_place() async throws {
        let lab = try Lab()
        let group = ServiceGroup(configuration: .init(
            services: [.init(service: lab.service(lab.controller())), .init(service: OtherPart(lab: lab, fails: true))],
            logger: Logger(label: "firewall-stop-test")))
        await #expect(throws: Failure.self) { try await group.run() }
        #expect(lab.tableExists, "the bypasses opened while the helper was down")
    }

    @Test func a_stop_that_was_asked_for_removes_the_table() async throws {
        let lab = try Lab()
        let group = ServiceGroup(configuration: .init(
            services: [.init(service: lab.service(lab.controller())), .init(service: OtherPart(lab: lab, fails: false))],
            logger: Logger(label: "firewall-stop-test")))
        try await withThrowingTaskGroup(of: Void.self) { tasks in
            tasks.addTask { try await group.run() }
            #expect(await lab.waitForTable(present: true))
            await group.triggerGracefulShutdown()
            try await tasks.waitForAll()
        }
        #expect(!lab.tableExists)
    }
}
