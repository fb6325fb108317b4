#if canImport(Glibc)
import Glibc
#endif
import Testing
@testable import DomainLists

/// `ListParser.parse(contentsOfFile:)` reserves room for the rules from the file's size before it
/// reads (SPEC §9). The size is only a hint: a file far larger than its names (a sparse file, a
/// huge file of comments or junk) must not become an allocation of its own size, or a file larger
/// than memory aborts the process ("failed to allocate") instead of being reported as a bad list.
@Suite("List file parse: the size-based reservation is bounded")
struct ListFileReservationTests {
    @Test func a_sparse_file_far_larger_than_its_names_reserves_at_most_the_cap_and_still_parses() throws {
        let path = "/tmp/scrolloff-reservation-\(getpid())-\(UInt64.random(in: 0...UInt64.max)).list"
        defer { unlink(path) }
        let head = Array("first.example\n0.0.0.0 second.example\n".utf8)
        let descriptor = open(path, O_WRONLY | O_CREAT | O_TRUNC | O_CLOEXEC, 0o600)
        try #require(descriptor >= 0)
        let wrote = head.withUnsafeBytes { write(descriptor, $0.baseAddress, $0.count) }
        // 256 MiB, all but the first line a hole: no disk used, read back as zeros (one long line).
        let size = 256 << 20
        let truncated = ftruncate(descriptor, off_t(size))
        close(descriptor)
        try #require(wrote == head.count && truncated == 0)

        let parsed = try ListParser.parse(
            contentsOfFile: path, options: ListParseOptions(budget: BadLineBudget(perThousandLines: 1000)))
        #expect(parsed.rules.map(\.name.text) == ["first.example", "second.example"])
        #expect(parsed.badLines.map(\.lineNumber) == [3])
        // Before the cap the names' storage was reserved at the file's size (256 MiB, plus 16 M
        // rule slots); at 200 GiB that allocation aborted the process.
        #expect(parsed.rules.storageBytes < 128 << 20)
    }
}
