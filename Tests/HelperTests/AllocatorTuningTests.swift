#if canImport(Glibc)
import Glibc
#endif
import Foundation
import Testing

@testable import Helper

/// glibc's mmap threshold, fixed at start (SPEC §9: memory stays flat; docs/benchmarks.md "Soak").
@Suite(.serialized) struct AllocatorTuningTests {
    /// glibc takes the setting (mallopt returns 1 only for a parameter and value it accepts).
    ///
    /// Its effect is not asserted in this process: glibc mmaps a block at or over the threshold only
    /// when no free space it already holds fits the block, and this test process, shared with every
    /// other suite, holds plenty (a clean CI run served the 1 MiB block from an arena with the
    /// threshold fixed). The effect is measured where it matters, in the helper: the allocator's
    /// bytes in use stay flat while a full cache evicts (`ForwarderHardeningEndToEndTests`), and
    /// `bench/soak.sh` over millions of names (docs/benchmarks.md "Soak").
    @Test func glibc_takes_the_fixed_mmap_threshold() {
        #if canImport(Glibc)
        #expect(AllocatorTuning.apply(environment: [:]) == [.mmapThreshold(128 * 1024)])
        #else
        #expect(AllocatorTuning.apply(environment: [:]).isEmpty)
        #endif
    }

    @Test func an_administrators_own_threshold_is_left_alone() {
        #expect(AllocatorTuning.apply(environment: ["MALLOC_MMAP_THRESHOLD_": "65536"]).isEmpty)
        #expect(AllocatorTuning.apply(environment: ["GLIBC_TUNABLES": "glibc.malloc.mmap_threshold=65536"]).isEmpty)
        #expect(AllocatorTuning.apply(environment: ["GLIBC_TUNABLES": "glibc.malloc.arena_max=4"]) == [.mmapThreshold(128 * 1024)])
    }
}
