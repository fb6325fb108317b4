import Foundation
import Testing

/// The household page on loopback answers a process of this machine as its user (SPEC §9a, §11):
/// the uid the kernel's TCP table shows for the connection gets exactly the control socket's
/// rights, so an account outside group `scrolloff` is not a member of `default` through the page.
/// As root and under the unit's capabilities: the kernel's tables are read without a capability
/// (an ordinary user's helper would count uid 65534, its own, as its administrator).
@Suite("Household page: users of this machine")
struct HouseholdLocalUserEndToEndTests {
    @Test(arguments: [PrivilegeMode.root, .unitCapabilities])
    func a_local_user_outside_the_group_is_refused_and_changes_nothing_while_a_listed_member_acts(mode: PrivilegeMode) throws {
        let scratch = try Scratch()
        // 127.0.0.1 is `default`'s; uid 65533 is listed as its member, uid 65534 (nobody) is not.
        let helper = try HouseholdHelper(scratch: scratch, configuration: "[profile]\nmembers = [65533]\n", mode: mode)
        mode.check(helper.child.process.pid)
        let jars = "\(scratch.path)/jars"
        try FileManager.default.createDirectory(atPath: jars, withIntermediateDirectories: true)
        chmod(jars, 0o777)
        func focusCount() throws -> Int {
            let status = try helper.cli(["status", "--json"])
            let object = try JSONSerialization.jsonObject(with: Data(status.output.utf8)) as? [String: Any]
            return try #require(object?["focus"] as? [Any], "\(status)").count
        }

        let outsider = WebDevice(base: "http://127.0.0.1:\(helper.webPort)", address: "127.0.0.1", jar: "\(jars)/nobody", user: 65534)
        let refusedPage = try outsider.get("/")
        #expect(refusedPage.status == 403, "\(refusedPage)")
        // Why (the control socket's own reason) and what to do (be added to group scrolloff).
        #expect(refusedPage.body.contains("may not act on profile") && refusedPage.body.contains("usermod -aG scrolloff")
                || refusedPage.body.contains("groupadd scrolloff"), "\(refusedPage.body)")
        // The sign-in page still gives a session and a token; the actions refuse anyway.
        let token = try #require(try outsider.get("/signin").csrf)
        let focus = try outsider.post("/focus", [("csrf", token), ("minutes", "10080"), ("entries", "tiktok")])
        #expect(focus.status == 403, "\(focus)")
        let use = try outsider.post("/bypass", [("csrf", token), ("action", "use"), ("entry", "instagram"), ("minutes", "5")])
        #expect(use.status == 403, "\(use)")
        #expect(try focusCount() == 0)

        let member = WebDevice(base: "http://127.0.0.1:\(helper.webPort)", address: "127.0.0.1", jar: "\(jars)/member", user: 65533)
        let page = try member.get("/")
        #expect(page.status == 200 && page.body.contains("This device"), "\(page)")
        let memberToken = try #require(page.csrf)
        let memberFocus = try member.post("/focus", [("csrf", memberToken), ("minutes", "10"), ("entries", "tiktok")])
        #expect(memberFocus.status == 303, "\(memberFocus)")
        #expect(try focusCount() == 1)
    }
}
