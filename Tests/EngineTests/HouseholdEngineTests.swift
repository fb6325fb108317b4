import ControlAPI
import ControlServer
import Enforcement
import Engine
import Helper
import ScrollOffCore
import Store
import Testing

@Suite("Engine: household requests and roles")
struct HouseholdEngineTests {
    @Test func requests_and_their_answers_survive_a_restart() async throws {
        let dir = Fixture.temporaryDirectory()
        let time = TestTimeSource(wall: Fixture.noon)
        do {
            let engine = try await Fixture.start(dir, time)
            let first = try await engine.requestTime(profile: "default", seconds: 900, note: "homework")
            _ = try await engine.requestTime(profile: "default", seconds: 300, note: "call grandma")
            _ = try await engine.answerTimeRequest(id: first.id, approve: true, answeredBy: "parent", note: "ok")
        }
        let engine = try await Fixture.start(dir, time)
        let requests = await engine.timeRequests(profile: nil)
        #expect(requests.map(\.note) == ["call grandma", "homework"])
        #expect(requests.map(\.status) == [.pending, .approved])
        #expect(requests.last?.answeredBy == "parent" && requests.last?.answerNote == "ok")
        #expect(requests.last?.answeredAt == Fixture.noon)
        #expect(try await WalletReport(engine.wallet()).balanceSeconds == 120 + 900)
        // The restarted engine still refuses a second answer and still answers the pending one.
        await #expect(throws: EngineError.self) { try await engine.answerTimeRequest(id: requests.last!.id, approve: true, answeredBy: "x", note: nil) }
        _ = try await engine.answerTimeRequest(id: requests.first!.id, approve: false, answeredBy: "parent", note: nil)
        #expect(await engine.timeRequests(profile: "default").first?.status == .declined)
    }

    @Test func roles_table_members_view_spend_and_ask_owners_do_everything() {
        for action in ProfileAction.allCases {
            #expect(ProfileRole.owner.allows(action))
            #expect(ProfileRole.member.allows(action) == [.view, .spend, .ask].contains(action), "\(action)")
        }
    }

    @Test func on_a_profile_without_owners_the_group_edits_but_only_root_grants() {
        // Group "root" (gid 0) stands in for group scrolloff: the caller is in it by primary gid.
        let authorizer = GroupMembershipAuthorizer(groupName: "root", helperUID: 4_000_000)
        let caller = CallerIdentity(uid: 1003, gid: 0, pid: 1)
        #expect(authorizer.decide(caller, profile: "default", access: ProfileAccess(), action: .edit) == .allowed)
        guard case .deniedByRole(let reason) = authorizer.decide(caller, profile: "default", access: ProfileAccess(), action: .grant) else {
            Issue.record("granting on an ownerless profile must be refused by role")
            return
        }
        #expect(reason.contains("names no owners, so only root may"))
        let root = CallerIdentity(uid: 0, gid: 0, pid: 1)
        #expect(authorizer.decide(root, profile: "kids", access: ProfileAccess(owners: [1000], members: [1001]), action: .grant) == .allowed)
        // A member listed on an owned profile may not edit, even in the group.
        let member = CallerIdentity(uid: 1001, gid: 0, pid: 1)
        #expect(authorizer.decide(member, profile: "kids", access: ProfileAccess(owners: [1000], members: [1001]), action: .edit) != .allowed)
        #expect(authorizer.decide(member, profile: "kids", access: ProfileAccess(owners: [1000], members: [1001]), action: .spend) == .allowed)
    }
}

@Suite("Engine: the device's profile for the household page")
struct DeviceProfileTests {
    @Test func a_device_is_in_the_profile_its_dns_queries_follow() async throws {
        let engine = try await Fixture.start(Fixture.temporaryDirectory(), TestTimeSource(wall: Fixture.noon))
        _ = try await engine.addProfile("kids", clients: ["192.0.2.0/28"])
        #expect(engine.profileName(forClient: ClientIP("192.0.2.5")!) == "kids")
        #expect(engine.profileName(forClient: ClientIP("198.51.100.1")!) == "default")
        await engine.setUnknownDevices("kids")
        #expect(engine.profileName(forClient: ClientIP("198.51.100.1")!) == "kids")
        #expect(engine.profileName(forClient: ClientIP("127.0.0.1")!) == "default")
    }
}

@Suite("Engine: unknown devices leave a locked profile only when its lock ends")
struct UnknownDevicesLockTests {
    @Test func moving_unknown_devices_out_of_a_locked_profile_waits_for_the_lock() async throws {
        let time = TestTimeSource(wall: Fixture.noon)
        let engine = try await Fixture.start(Fixture.temporaryDirectory(), time)
        _ = try await engine.addProfile("strict", clients: ["192.0.2.1/32"])
        #expect(await engine.setUnknownDevices("strict") == nil)
        let guest = ClientIP("198.51.100.7")!
        #expect(engine.profileName(forClient: guest) == "strict")
        _ = try await engine.block(["instagram"], profile: "strict")  // a 2 h cooldown (strict preset)

        let held = await engine.setUnknownDevices("default")
        #expect(held?.contains("waits until") == true, "\(held ?? "applied")")
        #expect(engine.profileName(forClient: guest) == "strict")
        time.pass(.minutes(119))
        try await engine.tick()
        #expect(engine.profileName(forClient: guest) == "strict")
        time.pass(.minutes(2))
        try await engine.tick()
        #expect(engine.profileName(forClient: guest) == "default")
    }
}

extension UnknownDevicesLockTests {
    @Test func a_restart_keeps_unknown_devices_and_checks_the_next_change_against_it() async throws {
        let dir = Fixture.temporaryDirectory()
        let time = TestTimeSource(wall: Fixture.noon)
        let guest = ClientIP("198.51.100.7")!
        do {
            let engine = try await Fixture.start(dir, time)
            _ = try await engine.addProfile("strict", clients: ["192.0.2.1/32"])
            #expect(await engine.setUnknownDevices("strict") == nil)
            _ = try await engine.block(["instagram"], profile: "strict")
        }
        let engine = try await Fixture.start(dir, time)
        #expect(engine.profileName(forClient: guest) == "strict")
        // A file changed while the helper was stopped still waits for the lock.
        #expect(await engine.setUnknownDevices("default") != nil)
        #expect(engine.profileName(forClient: guest) == "strict")
    }
}
