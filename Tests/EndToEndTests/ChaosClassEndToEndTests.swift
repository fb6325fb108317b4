import Foundation
import Testing

/// `version.bind CH TXT` and its kin (RFC 4892) are answered by the sinkhole itself with REFUSED,
/// as unbound does with `hide-version`: forwarded, they told any LAN device which resolver the
/// household's upstream runs. The test upstream prints every question it receives; it must see
/// none of them, over UDP or TCP, while an ordinary question still reaches it.
@Suite struct ChaosClassEndToEndTests {
    @Test(arguments: [PrivilegeMode.root, .ordinaryUser])
    func version_bind_and_other_chaos_questions_get_refused_and_never_reach_the_upstream(mode: PrivilegeMode) throws {
        let scratch = try Scratch()
        let upstream = try ScriptedUpstream(.plain, scratch: scratch)
        let server = try Sinkhole(scratch: scratch, upstreams: [upstream.port], mode: mode)
        mode.check(server.child.process.pid)
        for name in ["version.bind", "hostname.bind", "id.server", "version.server"] {
            for transport in ["+notcp", "+tcp"] {
                let answer = try dig(server.port, [transport, name, "CH", "TXT"])
                #expect(answer.contains("status: REFUSED"), "\(name) \(transport): \(answer)")
                #expect(answer.contains("ANSWER: 0,"), "\(name) \(transport): \(answer)")
            }
        }
        // The same server still forwards the Internet class: the upstream is reachable and asked.
        let ordinary = try dig(server.port, ["+short", "ordinary.test", "A"])
        #expect(ordinary.trimmingCharacters(in: .whitespacesAndNewlines) == "192.0.2.1", "\(ordinary)")
        let seen = upstream.queries
        #expect(seen.contains { $0.lowercased().hasPrefix("query ordinary.test.") }, "\(seen)")
        #expect(!seen.contains { line in ["version.", "hostname.", "id.server", "version.server"].contains { line.lowercased().contains($0) } },
                "a CHAOS question reached the upstream: \(seen)")
        #expect(server.child.isRunning)
    }
}
