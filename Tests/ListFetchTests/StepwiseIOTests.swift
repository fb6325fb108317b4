import Foundation
#if canImport(Glibc)
import Glibc
#endif
@testable import ListFetch
import ScrollOffCore
import Testing

/// A refresh's file I/O in steps (SPEC §9): the bytes are still exactly right, the writeback of a
/// growing copy keeps pace with it, the old copy's pages are gone before its rename, and a full
/// disk still fails cleanly. Page states are read from the kernel (`mincore`, `/proc/kpageflags`).
@Suite("A refresh's file I/O goes in steps")
struct StepwiseIOTests {
    static let mebibyte = 1 << 20

    @Test(arguments: ["/big-length", "/big-chunked", "/gzip"])
    func a_download_of_several_mebibytes_through_curl_arrives_byte_for_byte(route: String) async throws {
        let server = try ListServer.start()
        defer { server.stop() }
        let destination = Scratch.uniquePath("big")
        defer { Scratch.remove(destination) }
        var policy = Fixtures.quickPolicy
        policy.maxBytes = 16 << 20
        let size = 4 * Self.mebibyte + 12_345
        let result = try await ListFetcher(policy: policy).fetch(server.url("\(route)?bytes=\(size)"), into: destination)
        #expect(result.kind == .downloaded)
        #expect(result.bytesWritten == Int64(size))
        #expect(Hostnames.same(Scratch.bytes(destination), Hostnames.text(bytes: size)))
    }

    /// A retry's destination still holds the failed attempt's bytes; they are truncated away in
    /// steps before the new body is written.
    @Test func a_download_over_a_larger_leftover_file_keeps_only_the_new_bytes() async throws {
        let server = try ListServer.start()
        defer { server.stop() }
        let destination = Scratch.uniquePath("leftover")
        defer { Scratch.remove(destination) }
        try StepwiseFile.write(Hostnames.text(bytes: 3 * Self.mebibyte + 3), to: destination)
        let result = try await ListFetcher(policy: Fixtures.quickPolicy).fetch(server.url("/etag"), into: destination)
        #expect(result.bytesWritten == Int64(Fixtures.goodList.count))
        #expect(Scratch.bytes(destination) == Fixtures.goodList)
    }

    @Test func writing_a_file_in_steps_keeps_every_byte_and_replaces_the_old_one() throws {
        let directory = try Scratch.directory("durable")
        defer { Scratch.remove(directory) }
        let target = directory + "/copy.list"
        try DurableFile.write(Array("old\n".utf8), to: target)
        let bytes = Hostnames.text(bytes: 5 * Self.mebibyte + 777)
        try DurableFile.write(bytes, to: target)
        #expect(Hostnames.same(Scratch.bytes(target), bytes))
        let text = String(decoding: Hostnames.text(bytes: 3 * Self.mebibyte + 5), as: UTF8.self)
        try StepwiseFile.write(text, to: directory + "/held")
        #expect(Hostnames.same(Scratch.bytes(directory + "/held"), Array(text.utf8)))
        #expect(try FileManager.default.contentsOfDirectory(atPath: directory).sorted() == ["copy.list", "held"])
    }

    /// The old copy is mapped (never touched) before the rename; the mapping keeps its inode alive,
    /// so pages the rename did not have to free would still show as resident.
    @Test func replacing_a_copy_drops_the_old_copys_cached_pages_first_and_leaves_its_content() throws {
        let old = try CachedCopy("replace", bytes: 4 * Self.mebibyte + 100)
        defer { old.remove() }
        #expect(old.mapping.residentPages() == old.mapping.pageCount, "a file just written stays cached")

        let temporary = try DurableFile.makeTemporaryFile(in: old.directory, stem: "ads")
        let new = Array("example.com\n".utf8)
        try StepwiseFile.write(new, to: temporary)
        try DurableFile.replace(old.path, with: temporary)

        #expect(old.mapping.residentPages() == 0)
        #expect(Hostnames.same(old.mapping.bytes(), old.bytes), "the old copy reads back unchanged, from disk")
        #expect(Scratch.bytes(old.path) == new)
    }

    @Test func dropping_a_files_cached_pages_in_steps_keeps_its_content() throws {
        let copy = try CachedCopy("drop", bytes: 3 * Self.mebibyte + 1)
        defer { copy.remove() }
        #expect(copy.mapping.residentPages() == copy.mapping.pageCount)
        StepwiseIO.dropCachedPages(of: copy.path)
        #expect(copy.mapping.residentPages() == 0)
        #expect(Hostnames.same(Scratch.bytes(copy.path), copy.bytes))
    }

    /// The same 8 MiB written in libcurl's 16 KiB pieces twice: through `TransferContext`, whose
    /// writeback keeps at most two steps and the partial one unwritten, and with plain write(2),
    /// which leaves it all dirty (the control that shows the count can fail).
    @Test func writeback_of_a_download_keeps_pace_with_its_writes() throws {
        let directory = try Scratch.diskBackedDirectory("writeback")
        defer { Scratch.remove(directory) }
        let size = 8 * Self.mebibyte
        let piece = [UInt8](repeating: UInt8(ascii: "a"), count: 16 << 10)

        let stepped = directory + "/stepped"
        let fd = open(stepped, O_WRONLY | O_CREAT | O_TRUNC | O_CLOEXEC, 0o600)
        #expect(fd >= 0)
        let context = TransferContext(
            fileDescriptor: fd, maxBytes: Int64(size), cancel: CancelFlag(),
            progress: ProgressThrottle(handler: nil, attempt: 1, interval: .seconds(1)))
        for _ in 0..<(size / piece.count) {
            #expect(piece.withUnsafeBytes { context.write($0) } == piece.count)
        }
        let bound = (2 * StepwiseIO.step + StepwiseIO.step) / 4096
        let unwritten = try PageFlags.unwrittenPages(of: stepped)
        #expect(unwritten <= bound, "\(unwritten) of \(size / 4096) pages still dirty or under writeback")
        #expect(fsync(fd) == 0)
        close(fd)

        let plain = directory + "/plain"
        let plainFD = open(plain, O_WRONLY | O_CREAT | O_TRUNC | O_CLOEXEC, 0o600)
        for _ in 0..<(size / piece.count) { _ = piece.withUnsafeBytes { Glibc.write(plainFD, $0.baseAddress, $0.count) } }
        #expect(try PageFlags.unwrittenPages(of: plain) >= size / 4096 * 9 / 10)
        close(plainFD)

        // A file someone else left dirty: flushed through the same steps, nothing stays unwritten.
        try DurableFile.flush(plain)
        #expect(try PageFlags.unwrittenPages(of: plain) == 0)
    }

    /// The store's folder on a 4 MiB tmpfs: a 6 MB download runs out of space part way. The copy
    /// in force stays byte for byte, the temporary is gone (so the space is back and the failure is
    /// recorded), and a later copy that fits goes in.
    @Test func a_full_disk_fails_the_refresh_cleanly_and_keeps_the_old_copy() async throws {
        let server = try ListServer.start()
        defer { server.stop() }
        let disk = try SmallTmpfs(Scratch.uniquePath("full"))
        defer { disk.unmount() }
        let store = Fixtures.store(on: disk.path)
        let name = try ListName("ads")
        _ = await store.refresh(name, from: server.url("/etag"))

        let report = await store.refresh(name, from: server.url("/big-length?bytes=6000000"))
        guard case .failed(.localFile(_, "write", let code)) = report.outcome else {
            Issue.record("expected a failed write, got \(report.outcome)")
            return
        }
        #expect(code == ENOSPC)
        #expect(Scratch.bytes(store.copyPath(for: name)) == Fixtures.goodList)
        #expect(try FileManager.default.contentsOfDirectory(atPath: store.listsDirectory).sorted() == ["ads.json", "ads.list"])
        #expect(try await store.metadata(for: name)?.lastErrorCode == "local-file")

        // 20,000 whole lines of 21 bytes.
        let fits = await store.refresh(name, from: server.url("/big-length?bytes=420000"))
        #expect(fits.outcome == .updated(entryCount: 20_000, sizeBytes: 420_000))
        #expect(Hostnames.same(Scratch.bytes(store.copyPath(for: name)), Hostnames.text(bytes: 420_000)))

        // Filled to the last byte: a record cannot be replaced, the old one stays and no
        // temporary is left behind.
        let metadata = try #require(Scratch.bytes(store.metadataPath(for: name)))
        #expect(throws: ListFetchError.self) { try StepwiseFile.write([UInt8](repeating: 0, count: 8 << 20), to: disk.path + "/fill") }
        #expect(throws: ListFetchError.self) { try DurableFile.write([UInt8](repeating: 1, count: 1 << 20), to: store.metadataPath(for: name)) }
        #expect(Scratch.bytes(store.metadataPath(for: name)) == metadata)
        #expect(try FileManager.default.contentsOfDirectory(atPath: store.listsDirectory).sorted() == ["ads.json", "ads.list"])
    }
}

/// The list text `list_server.py` serves: lines `hNNNNNNN.example.com`, cut at `bytes`.
enum Hostnames {
    static func text(bytes: Int) -> [UInt8] {
        precondition(bytes <= long.count)
        return Array(long.prefix(bytes))
    }

    /// Made once, a line copied from the one before with its number counted up like an odometer:
    /// a debug build is slow at building 7 MiB a byte at a time.
    private static let long: [UInt8] = {
        let lines = 350_000, width = 21
        var out = [UInt8](repeating: 0, count: lines * width)
        out.withUnsafeMutableBufferPointer { buffer in
            let base = buffer.baseAddress!
            let first = Array("h0000000.example.com\n".utf8)
            first.withUnsafeBufferPointer { base.update(from: $0.baseAddress!, count: width) }
            for line in 1..<lines {
                let start = base + line * width
                start.update(from: start - width, count: width)
                var position = 7
                while start[position] == UInt8(ascii: "9") {
                    start[position] = UInt8(ascii: "0")
                    position -= 1
                }
                start[position] += 1
            }
        }
        return out
    }()

    /// memcmp, not element by element (slow in a debug build).
    static func same(_ a: [UInt8]?, _ b: [UInt8]) -> Bool {
        guard let a, a.count == b.count else { return false }
        guard !a.isEmpty else { return true }
        return a.withUnsafeBytes { x in b.withUnsafeBytes { y in memcmp(x.baseAddress!, y.baseAddress!, x.count) == 0 } }
    }
}

extension Scratch {
    /// A fresh folder on a file system with writeback (not tmpfs or ramfs, where pages are never
    /// written or dropped): the system temporary folder, else the package's `.build`.
    static func diskBackedDirectory(_ stem: String) throws -> String {
        let build = URL(fileURLWithPath: #filePath).deletingLastPathComponent().deletingLastPathComponent()
            .deletingLastPathComponent().appendingPathComponent(".build").path
        for base in [NSTemporaryDirectory(), build] {
            guard let type = try? fileSystemType(base), type != "tmpfs", type != "ramfs" else { continue }
            let path = base + "/listfetch-\(stem)-\(UUID().uuidString)"
            try FileManager.default.createDirectory(atPath: path, withIntermediateDirectories: true)
            return path
        }
        throw FileSystemUnsuitable(description: "neither \(NSTemporaryDirectory()) nor \(build) is on a file system with writeback")
    }

    struct FileSystemUnsuitable: Error, CustomStringConvertible { var description: String }

    /// `stat -f -c %T`: the file system's name (Glibc's module exports no statfs).
    static func fileSystemType(_ path: String) throws -> String {
        let process = Process()
        process.executableURL = URL(fileURLWithPath: "/usr/bin/stat")
        process.arguments = ["-f", "-c", "%T", path]
        let output = Pipe()
        process.standardOutput = output
        try process.run()
        let data = output.fileHandleForReading.readDataToEndOfFile()
        process.waitUntilExit()
        return String(decoding: data, as: UTF8.self).trimmingCharacters(in: .whitespacesAndNewlines)
    }
}

/// A read-only shared mapping of a file, for asking the kernel which of its pages are cached.
final class MappedFile {
    let base: UnsafeMutableRawPointer
    let size: Int
    var pageCount: Int { (size + 4095) / 4096 }

    struct Failed: Error, CustomStringConvertible { var description: String }

    init(_ path: String) throws {
        let fd = open(path, O_RDONLY | O_CLOEXEC)
        guard fd >= 0 else { throw Failed(description: "open \(path): errno \(errno)") }
        defer { close(fd) }
        var info = stat()
        guard fstat(fd, &info) == 0, info.st_size > 0 else { throw Failed(description: "stat \(path)") }
        size = Int(info.st_size)
        guard let mapped = mmap(nil, size, PROT_READ, MAP_SHARED, fd, 0), mapped != UnsafeMutableRawPointer(bitPattern: -1) else {
            throw Failed(description: "mmap \(path): errno \(errno)")
        }
        base = mapped
    }

    /// Pages of the file in the page cache (mincore(2) looks them up even where none is mapped).
    func residentPages() -> Int {
        var vector = [UInt8](repeating: 0, count: pageCount)
        guard mincore(base, size, &vector) == 0 else { return -1 }
        return vector.reduce(0) { $0 + Int($1 & 1) }
    }

    func bytes() -> [UInt8] { Array(UnsafeRawBufferPointer(start: base, count: size)) }

    func unmap() { munmap(base, size) }
}

/// A list copy of `Hostnames.text` just written durably as `ads.list` in a fresh disk-backed
/// folder, and mapped (never touched): the mapping keeps its inode alive and asks the kernel
/// which of its pages are still cached.
struct CachedCopy {
    let directory: String
    let path: String
    let bytes: [UInt8]
    let mapping: MappedFile

    init(_ stem: String, bytes size: Int) throws {
        directory = try Scratch.diskBackedDirectory(stem)
        path = directory + "/ads.list"
        bytes = Hostnames.text(bytes: size)
        do {
            try DurableFile.write(bytes, to: path)
            mapping = try MappedFile(path)
        } catch {
            Scratch.remove(directory)
            throw error
        }
    }

    func remove() {
        mapping.unmap()
        Scratch.remove(directory)
    }
}

/// Page flags of a file's cached pages from /proc/self/pagemap and /proc/kpageflags (root only:
/// without CAP_SYS_ADMIN the kernel hides the frame numbers, and this throws).
enum PageFlags {
    static let dirty: UInt64 = 1 << 4      // KPF_DIRTY
    static let writeback: UInt64 = 1 << 8  // KPF_WRITEBACK

    /// Pages that are dirty or still being written.
    static func unwrittenPages(of path: String) throws -> Int {
        let mapping = try MappedFile(path)
        defer { mapping.unmap() }
        // Reading one byte a page maps it without dirtying it, so pagemap can name its frame.
        var sum = 0
        for page in 0..<mapping.pageCount { sum &+= Int(mapping.base.load(fromByteOffset: page * 4096, as: UInt8.self)) }
        withExtendedLifetime(sum) {}
        let entries = try read("/proc/self/pagemap", offset: Int(bitPattern: mapping.base) / 4096 * 8, count: mapping.pageCount)
        var unwritten = 0
        for entry in entries {
            let frame = entry & ((1 << 55) - 1)
            guard entry >> 63 == 1, frame != 0 else {
                throw MappedFile.Failed(description: "/proc/self/pagemap hides page frames (the test needs root)")
            }
            let flags = try read("/proc/kpageflags", offset: Int(frame) * 8, count: 1)[0]
            if flags & (dirty | writeback) != 0 { unwritten += 1 }
        }
        return unwritten
    }

    private static func read(_ path: String, offset: Int, count: Int) throws -> [UInt64] {
        let fd = open(path, O_RDONLY | O_CLOEXEC)
        guard fd >= 0 else { throw MappedFile.Failed(description: "open \(path): errno \(errno)") }
        defer { close(fd) }
        var values = [UInt64](repeating: 0, count: count)
        let n = values.withUnsafeMutableBytes { pread(fd, $0.baseAddress, $0.count, off_t(offset)) }
        guard n == count * 8 else { throw MappedFile.Failed(description: "read \(path): \(n) bytes, errno \(errno)") }
        return values
    }
}

/// A 4 MiB tmpfs mounted for one test (root only, as `make test` and CI run).
final class SmallTmpfs {
    let path: String
    private var mounted = false

    init(_ path: String) throws {
        self.path = path
        try FileManager.default.createDirectory(atPath: path, withIntermediateDirectories: true)
        try Self.run("/usr/bin/mount", ["-t", "tmpfs", "-o", "size=4m,mode=0700", "tmpfs", path])
        mounted = true
    }

    func unmount() {
        guard mounted else { return }
        try? Self.run("/usr/bin/umount", ["-l", path])
        mounted = false
        try? FileManager.default.removeItem(atPath: path)
    }

    private static func run(_ tool: String, _ arguments: [String]) throws {
        let process = Process()
        process.executableURL = URL(fileURLWithPath: tool)
        process.arguments = arguments
        try process.run()
        process.waitUntilExit()
        guard process.terminationStatus == 0 else {
            throw MappedFile.Failed(description: "\(tool) \(arguments.joined(separator: " ")) failed (the test needs root)")
        }
    }
}
