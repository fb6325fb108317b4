import Foundation
import ScrollOffCore
import Testing
@testable import Store

/// SPEC §3: "Kill -9 at any moment loses nothing acknowledged and leaves the ledger consistent".
/// `store-crash-probe` runs the real wallet against the real store and prints each ledger id after
/// its commit returned; here it is killed with SIGKILL 30 times at seeded, varied moments.
@Suite struct CrashTests {
    /// The probe is built next to the test bundle by `swift build --build-tests`.
    static func probePath() throws -> String {
        let candidates = [CommandLine.arguments.first, Bundle.main.executablePath].compactMap { $0 }.map {
            URL(fileURLWithPath: $0).deletingLastPathComponent().appendingPathComponent("store-crash-probe").path
        }
        guard let found = candidates.first(where: { FileManager.default.isExecutableFile(atPath: $0) }) else {
            throw ProbeMissing(looked: candidates)
        }
        return found
    }

    struct ProbeMissing: Error, CustomStringConvertible {
        var looked: [String]
        var description: String { "store-crash-probe not found (looked at \(looked)); run `swift build --build-tests` first" }
    }

    /// Delays after the first acknowledgement, in microseconds: a fixed-seed LCG, so every run
    /// kills at the same planned moments (where exactly the kill lands still depends on the machine).
    static func delays(count: Int, seed: UInt64 = 0x5C0FF) -> [UInt32] {
        var state = seed
        return (0..<count).map { _ in
            state = state &* 6_364_136_223_846_793_005 &+ 1_442_695_040_888_963_407
            return UInt32((state >> 33) % 120_000)
        }
    }

    static func acknowledgedIDs(in file: String) throws -> [Int64] {
        let text = try String(contentsOfFile: file, encoding: .utf8)
        // Only whole lines: a line is written in one write(2) after COMMIT, so a partial one cannot occur,
        // but a missing final newline would mean the acknowledgement was not finished.
        return text.split(separator: "\n", omittingEmptySubsequences: true).dropLast(text.hasSuffix("\n") ? 0 : 1).compactMap { Int64($0) }
    }

    @Test func kill_9_thirty_times_loses_nothing_acknowledged_and_keeps_the_ledger_consistent() throws {
        let probe = try Self.probePath()
        let dir = TemporaryDirectory()
        defer { dir.remove() }
        try FileManager.default.createDirectory(atPath: dir.path, withIntermediateDirectories: true)
        var everAcknowledged: Set<Int64> = []
        for (run, delay) in Self.delays(count: 30).enumerated() {
            let output = dir.path + "/run-\(run).out"
            _ = FileManager.default.createFile(atPath: output, contents: nil)
            let process = Process()
            process.executableURL = URL(fileURLWithPath: probe)
            process.arguments = [dir.stateDirectory]
            process.standardOutput = try FileHandle(forWritingTo: URL(fileURLWithPath: output))
            try process.run()
            // Wait for traffic to be flowing, then kill mid-stream.
            var waited = 0
            while (try? FileManager.default.attributesOfItem(atPath: output)[.size] as? Int) ?? 0 == 0, process.isRunning, waited < 30_000 {
                usleep(1_000)
                waited += 1
            }
            #expect(process.isRunning, "run \(run): the probe stopped by itself (status \(process.isRunning ? 0 : process.terminationStatus))")
            usleep(delay)
            kill(process.processIdentifier, SIGKILL)
            process.waitUntilExit()
            #expect(process.terminationReason == .uncaughtSignal && process.terminationStatus == SIGKILL)

            let acknowledged = try Self.acknowledgedIDs(in: output)
            #expect(!acknowledged.isEmpty, "run \(run) acknowledged nothing")
            everAcknowledged.formUnion(acknowledged)

            let store = try Store(directory: dir.stateDirectory)
            let stored = Set(try store.ledger(profile: "probe").map(\.id))
            let lost = everAcknowledged.subtracting(stored)
            #expect(lost.isEmpty, "run \(run): acknowledged rows lost: \(lost.sorted().prefix(10))")
            let check = try #require(try store.verifyLedger().first)
            #expect(check.isConsistent, "run \(run): \(check)")
            #expect(try store.integrityCheck().isOK)
        }
        #expect(everAcknowledged.count > 30)
    }

    @Test func the_probe_left_alone_writes_every_kind_of_credit_change_consistently() throws {
        let dir = TemporaryDirectory()
        defer { dir.remove() }
        let process = Process()
        process.executableURL = URL(fileURLWithPath: try Self.probePath())
        process.arguments = [dir.stateDirectory, "400"]
        process.standardOutput = FileHandle.nullDevice
        try process.run()
        process.waitUntilExit()
        #expect(process.terminationReason == .exit && process.terminationStatus == 0)
        let store = try Store(directory: dir.stateDirectory)
        let reasons = Set(try store.ledger(profile: "probe").map(\.row.reason))
        #expect(reasons.isSuperset(of: [.starter, .earn, .spend, .bypassFree, .bypassCredit, .adjust, .expire]), "\(reasons)")
        #expect(try store.verifyLedger().first?.isConsistent == true)
    }
}
