// List-load benchmark (the brief's target: 1,000,000 names in force <= 1.5 s after the list is added).
// Runs the stages the helper runs between `scrolloff lists add URL` having the file on disk and the
// new matcher being published, on the helper's own code, and prints the CPU time of each:
//
//   validate  DomainListValidator.make (the list store's validator: ListParser over the file), which
//             keeps the parsed rules in ParsedCopies;
//   reuse     HelperEngine.parseLists, which must take those rules instead of parsing again;
//   build     HelperEngine.setLists → rebuild → MatcherTables.build → MatcherBuilder → DomainMatcher,
//             then the snapshot and the publish.
//
// and, to find where a stage's time goes, the parser and the builder alone (`parse`, `builder.add`,
// `builder.build`), plus the held-names difference a refresh of a held list computes
// (`RuleList.subtracting`, not on the `lists add` path).
//
// CPU time is the process's (getrusage RUSAGE_SELF, user + system): the helper runs the parse and
// the build on a thread of its own (LowPriorityWork), which a thread clock would miss, and nothing
// else in this process is busy. Each figure is the best of ROUNDS runs, so the noisy shared VM
// matters less; wall time is printed beside it. The list is bench/dns.sh's kind:
// `feed123.s456.gram-bench.com`, one per line (plain) or as `0.0.0.0 name` (hosts).
// Run through bench/listload.sh.
import DomainLists
import Enforcement
import Engine
import Foundation
import Helper
import Logging
import ScrollOffCore
#if canImport(Glibc)
import Glibc
#endif

enum ListLoadBench {
    static func run(_ arguments: [String]) {
        let count = arguments.first.flatMap { Int($0) } ?? 1_000_000
        let rounds = arguments.dropFirst().first.flatMap { Int($0) } ?? 3
        let semaphore = DispatchSemaphore(value: 0)
        let status = Box()
        Task.detached {
            status.value = await measureListLoad(count: count, rounds: rounds)
            semaphore.signal()
        }
        semaphore.wait()
        exit(status.value)
    }

    private final class Box: @unchecked Sendable { var value: Int32 = 0 }
}

/// CPU seconds of the whole process (every thread), user plus system.
private func processCPUSeconds() -> Double {
    var usage = rusage()
    getrusage(Int32(RUSAGE_SELF.rawValue), &usage)
    func seconds(_ t: timeval) -> Double { Double(t.tv_sec) + Double(t.tv_usec) / 1e6 }
    return seconds(usage.ru_utime) + seconds(usage.ru_stime)
}

/// Best (lowest CPU) of the rounds, with its wall time.
private struct StageFigure {
    var cpu = Double.infinity
    var wall = Double.infinity
    mutating func record(cpu: Double, wall: Double) {
        if cpu < self.cpu { self.cpu = cpu; self.wall = wall }
    }
    var text: String { "\(format(cpu * 1000, 0)) ms CPU (\(format(wall * 1000, 0)) ms wall)" }
}

private func measured<R>(_ figure: inout StageFigure, _ body: () throws -> R) rethrows -> R {
    let wall = monotonicSeconds()
    let cpu = processCPUSeconds()
    let result = try body()
    figure.record(cpu: processCPUSeconds() - cpu, wall: monotonicSeconds() - wall)
    return result
}

private func measuredAsync<R>(_ figure: inout StageFigure, _ body: () async throws -> R) async rethrows -> R {
    let wall = monotonicSeconds()
    let cpu = processCPUSeconds()
    let result = try await body()
    figure.record(cpu: processCPUSeconds() - cpu, wall: monotonicSeconds() - wall)
    return result
}

/// bench/dns.sh's names: `{word}{i}.s{i % 9973}.{word}-bench.com`, words drawn from the same ten.
private func benchNames(_ count: Int) -> [String] {
    let words = ["feed", "reel", "clip", "snap", "tok", "gram", "vid", "scroll", "story", "live"]
    var random = SplitMix64(state: 42)
    return (0..<count).map { i in "\(words[random.below(words.count)])\(i).s\(i % 9973).\(words[random.below(words.count)])-bench.com" }
}

private func measureListLoad(count: Int, rounds: Int) async -> Int32 {
    let folder = FileManager.default.temporaryDirectory.appendingPathComponent("scrolloff-listload-\(getpid())").path
    try? FileManager.default.createDirectory(atPath: folder, withIntermediateDirectories: true)
    defer { try? FileManager.default.removeItem(atPath: folder) }
    let catalogFolder = ProcessInfo.processInfo.environment["SCROLLOFF_CATALOG"] ?? "blocklists"

    let names = benchNames(count)
    var failures = 0
    print("list-load benchmark: \(count) names like \(names[0]), best of \(rounds) rounds, process CPU (all threads)")
    for variant in ["plain", "hosts"] {
        let path = "\(folder)/\(variant).txt"
        var text = ""
        text.reserveCapacity(count * 40)
        if variant == "hosts" { text += "# hosts-format copy\n127.0.0.1 localhost\n::1 localhost\n" }
        for name in names { text += variant == "hosts" ? "0.0.0.0 \(name)\n" : "\(name)\n" }
        do { try text.write(toFile: path, atomically: false, encoding: .utf8) } catch {
            print("FAIL cannot write \(path): \(error)")
            return 1
        }
        text = ""
        // The refreshed copy a held list's difference reads: 1% dropped, 1% new (as bench/dns.sh).
        let refreshedPath = "\(folder)/\(variant)-refreshed.txt"
        var refreshed = ""
        let fresh = max(1, count / 100)
        for name in names.prefix(count - fresh) { refreshed += name + "\n" }
        for i in 0..<fresh { refreshed += "new\(i).s\(i % 9973).fresh-bench.com\n" }
        try? refreshed.write(toFile: refreshedPath, atomically: false, encoding: .utf8)
        refreshed = ""

        var validate = StageFigure(), reuse = StageFigure(), build = StageFigure()
        var parse = StageFigure(), add = StageFigure(), builderBuild = StageFigure(), difference = StageFigure()
        var reused = true
        var ruleCount = 0
        var blocked = true
        for _ in 0..<rounds {
            // The path of `lists add`: validate (keeping the rules), reuse them, build and publish.
            let engine: HelperEngine
            do {
                let catalog = try EngineConfiguration.loadCatalog(folder: catalogFolder)
                engine = try await HelperEngine.start(
                    configuration: EngineConfiguration(stateDirectory: "\(folder)/state-\(variant)-\(UUID().uuidString)", catalog: catalog,
                                                       buildDate: Instant(millisecondsSince1970: 0)),
                    timeSource: SystemTimeSource(), logger: Logger(label: "scrolloff.bench"))
            } catch {
                print("FAIL the engine did not start: \(error)")
                return 1
            }
            let copies = ParsedCopies()
            let validator = DomainListValidator.make(budget: .default, keepingIn: copies)
            do {
                let summary = try measured(&validate) { try validator(path) }
                ruleCount = summary.entryCount
            } catch {
                print("FAIL the validator rejected the \(variant) list: \(error)")
                return 1
            }
            var parsed = measured(&reuse) { HelperEngine.parseLists(files: ["bench": path], budget: .default, reusing: copies) }
            // ParsedCopies.take forgets what it hands over: nothing waiting means the rules were reused.
            if copies.waiting != 0 || parsed.lists["bench"]?.countWithRepeats != ruleCount { reused = false }
            // Handed over as HelperControl does, so the build frees the parsed list as it reads it.
            var handed: [String: RuleList]? = parsed.lists
            parsed.lists = [:]
            await measuredAsync(&build) { await engine.setLists(handed.take()!, copies: parsed.copies) }
            // The listed names are in the published matcher (blocking them is a rule change, no build).
            if engine.box.enforcement.matcher.match(names[count / 2]).entrySet == .none { blocked = false }

            // The parts, on this thread: where a stage's time goes.
            let rules: RuleList
            do { rules = try measured(&parse) { try ListParser.parse(contentsOfFile: path) }.rules } catch {
                print("FAIL \(error)")
                return 1
            }
            var builder = MatcherBuilder()
            measured(&add) { builder.add(rules, entry: EntryIndex(0)) }
            let matcher = measured(&builderBuild) { builder.build() }
            if matcher.ruleCount != rules.count { blocked = false }
            // A refresh of a held list: the names the new copy lacks (not on the `lists add` path).
            if let now = try? ListParser.parse(contentsOfFile: refreshedPath).rules {
                let dropped = measured(&difference) { rules.subtracting(now) }
                if dropped.count != fresh { print("FAIL the difference found \(dropped.count) dropped names, expected \(fresh)"); failures += 1 }
            }
            trimHeap()
        }
        print("\(variant): \(ruleCount) rules from \(variant == "hosts" ? count + 3 : count) lines")
        print("  validate (parse, kept in ParsedCopies)   \(validate.text)")
        print("  reuse (HelperEngine.parseLists)          \(reuse.text)   \(reused ? "rules reused, not parsed again" : "NOT REUSED: parsed again")")
        print("  build (setLists: MatcherTables.build, snapshot, publish)  \(build.text)")
        print("  = in force after the download            \(format((validate.cpu + reuse.cpu + build.cpu) * 1000, 0)) ms CPU")
        print("  parts: ListParser.parse \(format(parse.cpu * 1000, 0)) ms, builder.add \(format(add.cpu * 1000, 0)) ms, "
            + "builder.build \(format(builderBuild.cpu * 1000, 0)) ms CPU")
        print("  held-names difference (refresh, 1% changed): \(difference.text)")
        print("RESULT \(variant) validate=\(format(validate.cpu * 1000, 0)) reuse=\(format(reuse.cpu * 1000, 0)) "
            + "build=\(format(build.cpu * 1000, 0)) total=\(format((validate.cpu + reuse.cpu + build.cpu) * 1000, 0)) "
            + "parse=\(format(parse.cpu * 1000, 0)) add=\(format(add.cpu * 1000, 0)) builderbuild=\(format(builderBuild.cpu * 1000, 0)) "
            + "difference=\(format(difference.cpu * 1000, 0))")
        if !reused { failures += 1 }
        if !blocked { print("FAIL a listed name is not matched after the build"); failures += 1 }
    }
    return failures == 0 ? 0 : 1
}
