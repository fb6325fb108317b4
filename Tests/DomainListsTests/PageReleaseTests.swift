#if canImport(Glibc)
import Glibc
#endif
import Testing
@testable import DomainLists

/// `PageRelease`: a region about to be freed goes back to the kernel in steps, its whole pages
/// only (SPEC §9: one large free kept a woken event loop off its core for milliseconds).
@Suite struct PageReleaseTests {
    /// Whether each page of `bytes` bytes at the page-aligned `base` is resident, from `mincore`.
    static func residency(_ base: UnsafeMutableRawPointer, bytes: Int) -> [Bool] {
        let pages = (bytes + PageRelease.pageSize - 1) / PageRelease.pageSize
        var vector = [UInt8](repeating: 0, count: pages)
        #expect(mincore(base, bytes, &vector) == 0)
        return vector.map { $0 & 1 != 0 }
    }

    static func mapAnonymous(_ bytes: Int) throws -> UnsafeMutableRawPointer {
        let mapped = try #require(mmap(nil, bytes, PROT_READ | PROT_WRITE, MAP_PRIVATE | MAP_ANONYMOUS, -1, 0))
        try #require(mapped != MAP_FAILED)
        return mapped
    }

    @Test func discarding_frees_the_whole_pages_inside_in_steps_and_leaves_the_partial_pages_at_the_edges() throws {
        let page = PageRelease.pageSize
        let size = 2 << 20
        let base = try Self.mapAnonymous(size)
        defer { munmap(base, size) }
        base.initializeMemory(as: UInt8.self, repeating: 0xAB, count: size)
        #expect(Self.residency(base, bytes: size).allSatisfy { $0 })

        // From 100 bytes into the first page to 300 bytes before the end: the first and the
        // last page are partly outside, so both stay.
        let from = 100, to = size - 300
        let calls = PageRelease.discard(base + from, bytes: to - from)
        let resident = Self.residency(base, bytes: size)
        #expect(resident.first == true)
        #expect(resident.last == true)
        #expect(resident.dropFirst().dropLast().allSatisfy { !$0 }, "every whole page inside is handed back")
        // About 2 MiB at 256 KiB a call: one call per step, never one for all.
        #expect(calls >= (size - 2 * page) / PageRelease.step)
        #expect(calls <= (size - 2 * page) / PageRelease.step + 2)

        let bytes = base.assumingMemoryBound(to: UInt8.self)
        #expect((0..<page).allSatisfy { bytes[$0] == 0xAB }, "the partial first page keeps its bytes")
        #expect(((size - page)..<size).allSatisfy { bytes[$0] == 0xAB }, "the partial last page keeps its bytes")
        #expect((page..<(size - page)).allSatisfy { bytes[$0] == 0 }, "the discarded pages read as zero")
    }

    @Test func a_huge_page_step_cuts_only_on_2_mib_boundaries() throws {
        let huge = 2 << 20
        let mapped = try Self.mapAnonymous(3 * huge)
        defer { munmap(mapped, 3 * huge) }
        let aligned = UnsafeMutableRawPointer(bitPattern: (UInt(bitPattern: mapped) + UInt(huge - 1)) & ~UInt(huge - 1))!
        aligned.initializeMemory(as: UInt8.self, repeating: 1, count: 2 * huge)
        #expect(PageRelease.discard(aligned, bytes: 2 * huge, step: huge) == 2)
        #expect(Self.residency(aligned, bytes: 2 * huge).allSatisfy { !$0 })
        // The same range in the default steps takes one call per 256 KiB.
        #expect(PageRelease.discard(aligned, bytes: 2 * huge) == 2 * huge / PageRelease.step)
    }

    @Test func a_region_smaller_than_a_page_is_left_alone() throws {
        let base = try Self.mapAnonymous(PageRelease.pageSize)
        defer { munmap(base, PageRelease.pageSize) }
        base.initializeMemory(as: UInt8.self, repeating: 7, count: PageRelease.pageSize)
        #expect(PageRelease.discard(base + 1, bytes: PageRelease.pageSize - 2) == 0)
        #expect(base.load(fromByteOffset: 1, as: UInt8.self) == 7)
    }

    @Test func releasing_an_array_whose_storage_another_copy_shares_leaves_that_copy_whole() {
        let count = PageRelease.step // 2 MiB of UInt64, well past one step
        var array = [UInt64](repeating: 0x5A5A, count: count)
        let other = array
        PageRelease.release(&array)
        #expect(array.isEmpty)
        let intact = other.count == count && other.allSatisfy { $0 == 0x5A5A }
        #expect(intact)
    }
}

/// `MatcherBuilder.build` hands its scratch arrays back in steps only when it is the one copy of
/// itself: a caller that keeps the builder shares every array with it.
@Suite struct MatcherBuilderReleaseTests {
    static func builder(names: Int) -> MatcherBuilder {
        var builder = MatcherBuilder()
        var rules = RuleList()
        for index in 0..<names { rules.append(ListRule(name: DomainName(normalizedText: "n\(index).example.com"))) }
        builder.add(rules, entry: EntryIndex(1))
        return builder
    }

    @Test func a_builder_whose_caller_keeps_a_copy_leaves_that_copy_able_to_build_the_same_matcher() {
        let kept = Self.builder(names: 100_000)
        var copy = kept
        let first = (consume copy).build()
        // Had the first build discarded the arrays it shares with `kept`, this one would read zeros.
        let second = kept.build()
        #expect(first.nodeCount == second.nodeCount)
        var wrong = 0
        for index in stride(from: 0, to: 100_000, by: 97) {
            let name = Array("www.n\(index).example.com".utf8)
            let a = name.withUnsafeBytes { first.match(text: $0) }
            let b = name.withUnsafeBytes { second.match(text: $0) }
            if a != b || a.entrySet.rawValue == 0 { wrong += 1 }
        }
        #expect(wrong == 0)
    }

    @Test func a_builder_that_is_its_own_only_copy_hands_its_scratch_back_in_steps() {
        var builder = Self.builder(names: 100_000)
        let before = PageRelease.stepsTaken.load(ordering: .relaxed)
        let matcher = (consume builder).build()
        let steps = PageRelease.stepsTaken.load(ordering: .relaxed) - before
        // Its records, node arrays and probe table are several MiB: tens of 256 KiB steps.
        #expect(steps >= 10)
        #expect(matcher.nodeCount > 100_000)
    }
}
