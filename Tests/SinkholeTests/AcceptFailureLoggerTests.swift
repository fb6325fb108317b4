#if canImport(Glibc)
import Glibc
#endif
import NIOCore
import NIOEmbedded
import NIOPosix
@testable import Sinkhole
import Testing
import TestSupport

/// Accepting at the descriptor limit (SPEC §9): a listener whose `accept` fails with EMFILE or
/// ENFILE says so once per interval with how often it happened meanwhile, not once per attempt.
/// The connection caps (`DescriptorBudget`) keep a flood from getting there; this is for a limit
/// lowered from outside (`prlimit --pid`) or the system's table being full.
@Suite struct AcceptFailureLoggerTests {
    static func listener(_ name: String, log: ThrottledLog) throws -> EmbeddedChannel {
        let channel = EmbeddedChannel()
        try channel.pipeline.syncOperations.addHandler(AcceptFailureLogger(log: log, listener: name))
        try channel.pipeline.syncOperations.addHandler(AcceptBackoffHandler(shouldForwardIOErrorCaught: false))
        return channel
    }

    @Test func a_thousand_failed_accepts_are_one_line_then_one_summary_per_interval() throws {
        let captured = CapturedLog()
        let log = ThrottledLog(logger: captured.logger(level: .trace), interval: .milliseconds(300))
        let dns = try Self.listener("dns tcp 127.0.0.1:53", log: log)
        let control = try Self.listener("control /run/scrolloff/control.sock", log: log)
        for _ in 0..<1000 { dns.pipeline.fireErrorCaught(IOError(errnoCode: EMFILE, reason: "accept")) }
        control.pipeline.fireErrorCaught(IOError(errnoCode: ENFILE, reason: "accept"))
        var seen = captured.linesWithMetadata
        #expect(seen.count == 2, "\(seen)")
        #expect(seen.first?.contains("this process's file descriptor limit is reached") == true, "\(seen)")
        #expect(seen.first?.contains("listener=dns tcp 127.0.0.1:53") == true, "\(seen)")
        #expect(seen.last?.contains("the system's file descriptor limit") == true, "\(seen)")
        // Other errors are not this condition: nothing is logged for them.
        dns.pipeline.fireErrorCaught(IOError(errnoCode: ECONNABORTED, reason: "accept"))
        #expect(captured.linesWithMetadata.count == 2)
        // After the interval, the next failure logs again with how many were kept quiet.
        usleep(400_000)
        dns.pipeline.fireErrorCaught(IOError(errnoCode: EMFILE, reason: "accept"))
        seen = captured.linesWithMetadata
        #expect(seen.count == 3 && seen[2].contains("events.since_last_line=999"), "\(seen)")
        _ = try dns.finish()
        _ = try control.finish()
    }
}
