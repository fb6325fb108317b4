#if canImport(Glibc)
import Glibc
#endif
import Foundation
import Testing

@testable import Helper

/// glibc's mmap threshold, fixed at start (issue 11 soak, README "Soak").
@Suite(.serialized) struct AllocatorTuningTests {
    #if canImport(Glibc)
    /// Bytes glibc has in blocks mmap'd on their own, from its malloc_info(3) totals.
    static func mmappedBytes() throws -> Int {
        var buffer: UnsafeMutablePointer<CChar>?
        var length = 0
        let stream = try #require(open_memstream(&buffer, &length))
        let mallocInfo = try #require(AllocatorReport.mallocInfo)
        _ = mallocInfo(0, stream)
        fclose(stream)
        let text = String(cString: try #require(buffer))
        free(buffer)
        let totals = try #require(text.components(separatedBy: "</heap>").last)
        let line = try #require(totals.split(separator: "\n").first { $0.contains("<total type=\"mmap\"") })
        let size = try #require(line.range(of: "size=\""))
        return try #require(Int(line[size.upperBound...].prefix { $0.isNumber }))
    }

    /// glibc's default raises the threshold to the size of any mmap'd block freed, so after a
    /// 4 MiB block comes and goes, a 1 MiB one would come from an arena (where the helper's
    /// small cached answers pin the space around it). Fixed, it is mmap'd on its own again.
    @Test func a_block_over_the_threshold_is_mmapped_even_after_a_larger_one_was_freed() throws {
        #expect(AllocatorTuning.apply(environment: [:]).contains(.mmapThreshold(128 * 1024)))
        let large = try #require(malloc(4 << 20))
        memset(large, 1, 4 << 20)
        free(large)
        let block = try #require(malloc(1 << 20))
        defer { free(block) }
        // glibc marks a chunk mmap'd on its own with bit 1 (IS_MMAPPED) of the size word just
        // before the pointer (malloc/malloc.c, `mchunk_size`). Read from the block itself: the
        // process-wide totals move with every other test running alongside (a full run saw 0).
        let sizeWord = UnsafeRawPointer(block).load(fromByteOffset: -MemoryLayout<Int>.size, as: UInt.self)
        #expect(sizeWord & 2 != 0, "a 1 MiB block came from an arena (size word \(String(sizeWord, radix: 16)))")
        // The allocator's own account agrees: at least that block is mmap'd.
        #expect(try Self.mmappedBytes() >= 1 << 20)
    }
    #endif

    @Test func an_administrators_own_threshold_is_left_alone() {
        #expect(AllocatorTuning.apply(environment: ["MALLOC_MMAP_THRESHOLD_": "65536"]).isEmpty)
        #expect(AllocatorTuning.apply(environment: ["GLIBC_TUNABLES": "glibc.malloc.mmap_threshold=65536"]).isEmpty)
        #expect(AllocatorTuning.apply(environment: ["GLIBC_TUNABLES": "glibc.malloc.arena_max=4"]) == [.mmapThreshold(128 * 1024)])
    }
}
