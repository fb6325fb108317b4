import Foundation
import ListFetch
import ScrollOffCore
import Synchronization

/// The test stand-in for the DomainLists parser: every line that is not blank or a `#` comment
/// must be a hostname (two or more labels of a-z, 0-9 and inner hyphens). More than
/// `maxBadLines` bad lines rejects the copy, as the real parser's error budget does.
struct HostnameValidator: Sendable {
    var maxBadLines: Int

    struct TooManyBadLines: Error, CustomStringConvertible {
        var badLines: Int
        var limit: Int
        var firstLine: Int
        var description: String {
            "\(badLines) lines are not hostnames (the limit is \(limit)), the first at line \(firstLine)"
        }
    }

    func validate(_ path: String) throws -> ValidationSummary {
        let text = try String(contentsOfFile: path, encoding: .utf8)
        var entries = 0
        var bad: [ValidationSummary.BadLine] = []
        for (index, raw) in text.split(separator: "\n", omittingEmptySubsequences: false).enumerated() {
            let line = raw.trimmingCharacters(in: .whitespaces)
            if line.isEmpty || line.hasPrefix("#") { continue }
            if Self.isHostname(line) {
                entries += 1
            } else {
                bad.append(.init(lineNumber: index + 1, text: line, reason: "not a hostname"))
            }
        }
        if bad.count > maxBadLines, let first = bad.first {
            throw TooManyBadLines(badLines: bad.count, limit: maxBadLines, firstLine: first.lineNumber)
        }
        return ValidationSummary(entryCount: entries, badLineCount: bad.count, badLines: bad)
    }

    static func isHostname(_ text: String) -> Bool {
        let labels = text.split(separator: ".", omittingEmptySubsequences: false)
        guard labels.count >= 2 else { return false }
        return labels.allSatisfy { label in
            !label.isEmpty && label.count <= 63 && label.first != "-" && label.last != "-"
                && label.allSatisfy { ($0.isASCII && ($0.isLetter || $0.isNumber)) || $0 == "-" }
        }
    }

    var asValidator: ListValidator { { path in try validate(path) } }
}

/// Records every wait the fetcher asks for and waits only a millisecond of it, so the real retry
/// path runs without real minutes.
final class RecordingSleeper: Sendable {
    private let delays = Mutex<[Span]>([])

    var recorded: [Span] { delays.withLock { $0 } }

    var sleeper: Sleeper {
        { span in
            self.delays.withLock { $0.append(span) }
            try await Task.sleep(for: .milliseconds(1))
        }
    }
}

/// A clock the test moves by hand.
final class ManualClock: Sendable {
    private let current: Mutex<Instant>

    init(_ start: Instant = Instant(secondsSince1970: 1_790_000_000)) { current = Mutex(start) }

    var now: Instant { current.withLock { $0 } }
    func advance(_ span: Span) { current.withLock { $0 = $0 + span } }
    var reading: @Sendable () -> Instant { { self.now } }
}

/// Collects progress reports from the transfer thread.
final class ProgressLog: Sendable {
    private let reports = Mutex<[FetchProgress]>([])
    var all: [FetchProgress] { reports.withLock { $0 } }
    var handler: ProgressHandler { { report in self.reports.withLock { $0.append(report) } } }
}

enum Fixtures {
    /// The list `/etag`, `/lastmod`, `/flaky` and `/redirect/0` serve (see list_server.py).
    static let goodList = Array("# A small, valid list\nexample.com\nads.example.net\ntracker.example.org\n".utf8)

    /// Short limits so failure cases finish in about a second each.
    static let quickPolicy = FetchPolicy(
        maxBytes: 1 << 20,
        connectTimeout: .seconds(2),
        totalTimeout: .seconds(10),
        // libcurl averages speed over a window of several seconds, so the limit must sit well
        // above the few bytes /stall sends for the stall to be seen after one second.
        lowSpeedBytesPerSecond: 1000,
        stallTimeout: .seconds(1),
        firstRetryDelay: .seconds(1),
        maxRetryDelay: .seconds(30)
    )

    /// A store on `directory`, a test's own small or failing file system, whose downloads may
    /// reach 16 MiB: more than that file system holds, so the disk fails them, not the size limit.
    static func store(on directory: String) -> ListStore {
        var policy = quickPolicy
        policy.maxBytes = 16 << 20
        return ListStore(
            stateDirectory: directory,
            fetcher: ListFetcher(policy: policy, sleeper: RecordingSleeper().sleeper),
            validator: HostnameValidator(maxBadLines: 0).asValidator,
            clock: ManualClock().reading)
    }
}
