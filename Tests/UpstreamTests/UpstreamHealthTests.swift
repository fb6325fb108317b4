import NIOCore
import Testing
@testable import Upstream

/// Which upstream is asked first: one that keeps failing is tried last for a while, never skipped.
@Suite struct UpstreamHealthTests {
    @Test func upstream_health_backs_off_after_repeated_failures_and_recovers() {
        let health = UpstreamHealth(count: 2, failuresBeforeBackoff: 2, backoff: .seconds(30))
        let second: UInt64 = 1_000_000_000
        #expect(health.order(now: 0) == [0, 1])
        #expect(!health.failed(0, now: 0))
        #expect(health.order(now: 0) == [0, 1])
        #expect(health.failed(0, now: 0))
        #expect(health.order(now: second) == [1, 0])
        #expect(health.order(now: 31 * second) == [0, 1])
        health.succeeded(0)
        #expect(health.order(now: second) == [0, 1])
    }
}
