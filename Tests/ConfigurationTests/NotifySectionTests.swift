@testable import Engine
@testable import Helper
import Testing

/// `[notify]` (SPEC §9a): the hook that tells owners of a new request for time.
@Suite("[notify]: the new-request hook")
struct NotifySectionTests {
    @Test func command_and_timeout_reach_the_settings_apart_from_the_digests() throws {
        let c = try parse("[notify]\ncommand = [\"/usr/local/bin/tell-parents\", \"--chat\", \"family\"]\ntimeout = \"20s\"\n")
        #expect(c.notifyHook.command == ["/usr/local/bin/tell-parents", "--chat", "family"])
        #expect(c.notifyHook.timeout == .seconds(20))
        #expect(c.digestHook == DigestHookSettings())
        #expect(try parse("").notifyHook == DigestHookSettings())
    }

    @Test(arguments: [
        ("[notify]\ncommand = [\"tell-parents\"]\n", "notify.command[1]", 2, "absolute program path"),
        ("[notify]\ncommand = \"/bin/true\"\n", "notify.command", 2, "absolute program path"),
        ("[notify]\ntimeout = \"6min\"\n", "notify.timeout", 2, "1s to 5min"),
    ])
    func a_bad_value_is_refused_with_its_key_and_line(_ text: String, _ key: String, _ line: Int, _ allowed: String) {
        let found = problems(text)
        #expect(found.contains { $0.key == key && $0.line == line && ($0.allowed ?? "").contains(allowed) }, "\(found)")
    }
}
