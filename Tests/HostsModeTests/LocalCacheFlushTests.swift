import Foundation
@testable import HostsMode
import Logging
import Testing

/// The cache flush after a hosts-file write runs the commands that exist, and skips the others.
struct LocalCacheFlushTests {
    @Test func present_commands_run_in_the_background_and_missing_ones_are_skipped() throws {
        let folder = NSTemporaryDirectory() + "flush-\(UUID().uuidString)"
        try FileManager.default.createDirectory(atPath: folder, withIntermediateDirectories: true)
        defer { try? FileManager.default.removeItem(atPath: folder) }
        let script = folder + "/fake-nscd"
        try "#!/bin/sh\necho \"$@\" > \(folder)/ran\n".write(toFile: script, atomically: true, encoding: .utf8)
        chmod(script, 0o755)
        LocalCacheFlush(commands: [[folder + "/missing-resolvectl", "flush-caches"], [script, "-i", "hosts"]])
            .run(logger: Logger(label: "test"))
        let deadline = Date().addingTimeInterval(5)
        while !FileManager.default.fileExists(atPath: folder + "/ran"), Date() < deadline { usleep(20_000) }
        #expect((try? String(contentsOfFile: folder + "/ran", encoding: .utf8)) == "-i hosts\n")
    }
}
