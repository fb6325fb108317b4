import Foundation
#if canImport(Glibc)
import Glibc
#endif
@testable import ListFetch
import ScrollOffCore
import Testing

/// A write error that only the disk reports (writeback fails after write(2) succeeded) must fail
/// the file that lost its bytes. `sync_file_range` with a WAIT flag reports such an error to its
/// caller and advances the file's error cursor, so an fsync on the same descriptor afterwards
/// returns 0 (Linux `file_fdatawait_range` → `file_check_and_advance_wb_err`): the stepwise
/// writeback must keep the error itself, or a copy whose bytes never reached the disk is renamed
/// into place as if durable, and its names are gone after the page cache or a reboot drops it.
///
/// The disk: ext2 on a loop device over a 64 MiB sparse image on a 12 MiB tmpfs. The image's
/// metadata (its first 8 MiB) is written out first, then the tmpfs is filled, so every data block
/// written later fails in writeback (ENOSPC from the loop device) while metadata still writes:
/// without the stepwise writeback, fsync reports the error (checked below as a control).
@Suite("A writeback error is never lost", .serialized)
struct WritebackErrorTests {
    @Test func a_plain_fsync_reports_the_failing_disk() throws {
        let disk = try FailingDisk()
        defer { disk.remove() }
        let fd = open(disk.path + "/plain", O_WRONLY | O_CREAT | O_TRUNC | O_CLOEXEC, 0o600)
        try #require(fd >= 0)
        defer { close(fd) }
        let bytes = Hostnames.text(bytes: 4 << 20)
        let written = bytes.withUnsafeBytes { write(fd, $0.baseAddress, $0.count) }
        #expect(written == bytes.count)
        #expect(fsync(fd) != 0)
    }

    @Test func writing_a_file_in_steps_fails_when_its_writeback_fails() throws {
        let disk = try FailingDisk()
        defer { disk.remove() }
        #expect(throws: ListFetchError.self) {
            try StepwiseFile.write(Hostnames.text(bytes: 4 << 20), to: disk.path + "/held")
        }
        #expect(throws: ListFetchError.self) {
            try DurableFile.write(Hostnames.text(bytes: 4 << 20), to: disk.path + "/ads.json")
        }
        #expect(!DurableFile.exists(disk.path + "/ads.json"))
    }

    /// The disk refuses the download's first mebibytes and takes the rest (the space comes back
    /// part way, as it does when something else frees it): the failed steps are waited for by the
    /// stepwise writeback, long before the final fsync, which only sees the last steps succeed.
    @Test func a_download_whose_early_writeback_fails_is_not_put_in_force() async throws {
        let server = try ListServer.start()
        defer { server.stop() }
        let disk = try FailingDisk()
        defer { disk.remove() }
        let store = Fixtures.store(on: disk.path)
        let name = try ListName("ads")
        let filler = disk.filler
        let report = await store.refresh(name, from: server.url("/slow?bytes=4200000&pieces=8&delay_ms=300")) { progress in
            if progress.receivedBytes >= 2_000_000 { unlink(filler) }
        }
        #expect(!DurableFile.exists(disk.filler), "the space came back part way")
        guard case .failed(.localFile) = report.outcome else {
            Issue.record("a copy whose first bytes the disk refused was put in force: \(report.outcome)")
            return
        }
        #expect(!DurableFile.exists(store.copyPath(for: name)))
    }
}

/// A file system whose data writes fail in writeback (see `WritebackErrorTests`); root only.
final class FailingDisk {
    let path: String
    private let backing: String
    /// The file that fills the backing tmpfs: deleted, it gives the data blocks room again.
    var filler: String { backing + "/fill" }
    private var loop = ""

    init() throws {
        backing = Scratch.uniquePath("failing-backing")
        path = Scratch.uniquePath("failing-disk")
        try FileManager.default.createDirectory(atPath: backing, withIntermediateDirectories: true)
        try FileManager.default.createDirectory(atPath: path, withIntermediateDirectories: true)
        try Self.run("/usr/bin/mount", ["-t", "tmpfs", "-o", "size=12m,mode=0700", "tmpfs", backing])
        let image = backing + "/disk"
        try Self.run("/usr/bin/truncate", ["-s", "64M", image])
        try Self.run("/usr/sbin/mkfs.ext2", ["-q", "-F", "-b", "4096", image])
        // The metadata blocks allocated in the tmpfs, so that only data writes fail later.
        try Self.run("/usr/bin/dd", ["if=\(image)", "of=\(image)", "bs=1M", "count=8", "conv=notrunc", "status=none"])
        loop = try Self.run("/usr/sbin/losetup", ["-f", "--show", image]).trimmingCharacters(in: .whitespacesAndNewlines)
        try Self.run("/usr/bin/mount", [loop, path])
        try? Self.run("/usr/bin/dd", ["if=/dev/zero", "of=\(backing)/fill", "bs=64k", "status=none"])
    }

    func remove() {
        try? Self.run("/usr/bin/umount", [path])
        if !loop.isEmpty { try? Self.run("/usr/sbin/losetup", ["-d", loop]) }
        try? Self.run("/usr/bin/umount", ["-l", backing])
        try? FileManager.default.removeItem(atPath: path)
        try? FileManager.default.removeItem(atPath: backing)
    }

    @discardableResult
    private static func run(_ tool: String, _ arguments: [String]) throws -> String {
        let process = Process()
        process.executableURL = URL(fileURLWithPath: tool)
        process.arguments = arguments
        let output = Pipe()
        process.standardOutput = output
        try process.run()
        let text = String(decoding: output.fileHandleForReading.readDataToEndOfFile(), as: UTF8.self)
        process.waitUntilExit()
        guard process.terminationStatus == 0 else {
            throw MappedFile.Failed(description: "\(tool) \(arguments.joined(separator: " ")) failed (the test needs root and a loop device)")
        }
        return text
    }
}
