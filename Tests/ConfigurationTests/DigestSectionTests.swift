@testable import Engine
@testable import Helper
import Testing

/// `[digest]` (SPEC §7): the weekly digest's delivery hook.
@Suite("[digest]: the weekly digest's hook")
struct DigestSectionTests {
    @Test func command_and_timeout_reach_the_settings() throws {
        let c = try parse("[digest]\ncommand = [\"/usr/local/bin/mail-digest\", \"--to\", \"sam@example.org\"]\ntimeout = \"30s\"\n")
        #expect(c.digestHook.command == ["/usr/local/bin/mail-digest", "--to", "sam@example.org"])
        #expect(c.digestHook.timeout == .seconds(30))
        #expect(try parse("").digestHook == DigestHookSettings())
    }

    @Test(arguments: [
        ("[digest]\ncommand = [\"mail-digest\"]\n", "digest.command[1]", 2, "absolute program path"),
        ("[digest]\ncommand = \"/bin/true\"\n", "digest.command", 2, "absolute program path"),
        ("[digest]\ntimeout = \"10min\"\n", "digest.timeout", 2, "1s to 5min"),
        ("[digest]\ntimeout = \"0s\"\n", "digest.timeout", 2, "1s to 5min"),
    ])
    func a_bad_value_is_refused_with_its_key_and_line(_ text: String, _ key: String, _ line: Int, _ allowed: String) {
        let found = problems(text)
        #expect(found.contains { $0.key == key && $0.line == line && ($0.allowed ?? "").contains(allowed) }, "\(found)")
    }
}
