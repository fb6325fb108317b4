import Foundation
import Testing

/// SPEC §9 (memory per name) with the real binaries: a list of one name repeated until it nearly
/// reaches the 64 MiB download cap (what a small gzip inflates to) costs the helper less than the
/// cap. Before, every repeat was kept (~22 B a line, about 80 MiB for this list) and the parsed
/// copy lived through the whole matcher build. In every privilege mode (SPEC §9): as root, as an
/// ordinary user and under the unit's capabilities, the helper frees pages the same way.
@Suite struct ListMemoryEndToEndTests {
    @Test(arguments: PrivilegeMode.allCases)
    func a_list_of_one_name_repeated_up_to_the_download_cap_costs_less_than_the_cap(mode: PrivilegeMode) throws {
        let scratch = try Scratch()
        let upstream = try Dnsmasq(scratch: scratch)
        let server = try Sinkhole(scratch: scratch, upstreams: [upstream.port], extra: ["--log-level", "warning"], mode: mode)
        mode.check(server.child.process.pid)
        // One 21-byte line repeated up to the household's default bound of names ([lists]
        // max_names, 2,000,000 lines, each counted: 1,835,008 lines, 37 MiB); a list past it is
        // refused before it is used (ListBoundTests), so this is the most one such list may cost.
        let list = "\(scratch.path)/one-name.txt"
        let line = "bomb.listmem.example\n"
        let block = String(repeating: line, count: 1 << 16)
        let handle = try #require(FileHandle(forWritingAtPath: try scratch.file("one-name.txt", "")))
        var written = 0
        while (written + block.utf8.count) / line.utf8.count <= 1_900_000 {
            try handle.write(contentsOf: Data(block.utf8))
            written += block.utf8.count
        }
        try handle.close()
        // In a folder any user can enter (the scratch folder, 0755): the ordinary user's helper reads it.
        chmod(list, 0o644)
        let lines = written / line.utf8.count
        let pid = server.child.process.pid
        let baseline = residentKiB(pid).now
        try #require(baseline > 0, "no VmRSS for the helper")
        // The peak from here on: VmHWM reset to VmRSS (proc(5), clear_refs "5").
        try "5".write(toFile: "/proc/\(pid)/clear_refs", atomically: false, encoding: .utf8)
        let added = try server.cli(["lists", "add", "file://" + list, "--name", "onename"])
        #expect(added.exitCode == 0, "\(added)")
        let peak = residentKiB(pid).peak
        print("\(mode.rawValue): one-name list of \(lines) lines: VmRSS \(baseline) KiB before, VmHWM \(peak) KiB during the add")
        // The cap, with no margin: the list itself is one rule.
        #expect(peak - baseline < 64 * 1024, "\(mode.rawValue): the add took \((peak - baseline) / 1024) MiB over \(baseline / 1024) MiB")
        // Every line still counts as a rule ("Added onename: 2,949,120 names."), and the name blocks.
        let grouped = String(String(lines).reversed().enumerated().map { $0.offset > 0 && $0.offset % 3 == 0 ? ",\($0.element)" : "\($0.element)" }
            .joined().reversed())
        #expect(added.output.contains("\(grouped) names"), "\(added)")
        #expect(try server.cli(["block", "onename"]).exitCode == 0)
        #expect(try dig(server.port, ["+short", "www.bomb.listmem.example"]).contains("0.0.0.0"))
    }
}
