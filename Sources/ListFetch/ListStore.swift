import Foundation
import ScrollOffCore

/// The result of one `ListStore.refresh`.
public struct RefreshReport: Sendable, Equatable {
    public enum Outcome: Sendable, Equatable {
        /// A new copy downloaded whole, passed validation and is now in force.
        case updated(entryCount: Int, sizeBytes: Int64)
        /// The server answered 304: the copy in force is current (a successful refresh).
        case unchanged
        /// Nothing changed on disk except the metadata, which records the error.
        case failed(ListFetchError)
    }

    public var name: ListName
    public var outcome: Outcome
    /// The metadata as written after this refresh (as it was, after a cancelled one).
    public var metadata: ListMetadata
    /// Transfer details (attempts, redirects) when the download itself succeeded.
    public var fetch: FetchResult?
}

/// Why a refresh may not drop names: the rule that holds the list and when it ends.
public struct ListHold: Sendable, Equatable {
    public var until: Instant?
    public var reason: String
    public init(until: Instant?, reason: String) {
        self.until = until
        self.reason = reason
    }
}

/// Writes to `output` the rules of `kept` files (the copy in force, the names already held) that
/// the new copy `newCopy` lacks, in a list format the validator reads, and returns how many. ListFetch
/// knows no list format; the helper passes one backed by the DomainLists parser.
public typealias ListDropper = @Sendable (_ kept: [String], _ newCopy: String, _ output: String) throws -> Int

/// Asked with a validated copy's name count before it replaces the copy in force; throwing
/// (`ListFetchError.overBound`) keeps the old copy, as any failed refresh does. The household's
/// bound on names in force is checked here, where the count is known and nothing is in force yet.
public typealias ListAdmission = @Sendable (_ entryCount: Int) async throws(ListFetchError) -> Void

/// What `ListStore.adoptHeld` did.
public enum HeldAdoption: Sendable, Equatable {
    /// Nothing: the hold moved meanwhile, or a refresh of the list is under way.
    case refused
    /// The names held here were the household's already; its revision is noted.
    case same
    /// `<name>.held` now holds the household's names the copy lacks.
    case replaced
}

/// What a list's record says of its held names, compared before they are replaced (`adoptHeld`).
public struct HeldState: Sendable, Equatable {
    public var held: HeldNames?
    public var revision: Int64?

    public init(_ metadata: ListMetadata?) {
        held = metadata?.held
        revision = metadata?.heldRevision
    }
}

/// Keeps the downloaded lists under `<state>/lists/`: `<name>.list` is the copy in force,
/// `<name>.json` its `ListMetadata`, and `<name>.held` the names a refresh dropped while a rule
/// held the list (in force with the copy until the lock ends): those this helper's refresh
/// dropped, and those the household holds that the copy lacks (`adoptHeld`).
///
/// A new copy replaces the old only when it downloaded whole and the validator accepted it; it is
/// written to a temporary file in the same folder, fsynced, renamed over the old copy and the
/// folder fsynced (`DurableFile`). Any failure leaves the old copy byte for byte and records why,
/// so blocking keeps working on the last good list. Two refreshes of one list never overlap: a
/// second request for the same URL joins the one in flight (and gets no progress reports).
public actor ListStore {
    public nonisolated let listsDirectory: String
    private let fetcher: ListFetcher
    private let validator: ListValidator
    private let dropper: ListDropper?
    private let clock: @Sendable () -> Instant
    private var inFlight: [ListName: InFlight] = [:]
    private var nextTicket = 0

    private struct InFlight {
        var ticket: Int
        var url: String
        var task: Task<RefreshReport, Never>
    }

    /// - Parameters:
    ///   - stateDirectory: the helper's state folder; lists go to its `lists` subfolder (0700).
    ///   - validator: decides whether a downloaded copy may be used (the DomainLists parser).
    ///   - clock: the trusted clock (SPEC §11); nothing here reads the wall clock itself.
    public init(
        stateDirectory: String,
        fetcher: ListFetcher = ListFetcher(),
        validator: @escaping ListValidator,
        dropper: ListDropper? = nil,
        clock: @escaping @Sendable () -> Instant
    ) {
        let trimmed = stateDirectory.hasSuffix("/") && stateDirectory.count > 1 ? String(stateDirectory.dropLast()) : stateDirectory
        listsDirectory = trimmed + "/lists"
        self.fetcher = fetcher
        self.validator = validator
        self.dropper = dropper
        self.clock = clock
    }

    /// The copy in force for `name` (it may not exist yet).
    public nonisolated func copyPath(for name: ListName) -> String { "\(listsDirectory)/\(name.rawValue).list" }
    public nonisolated func metadataPath(for name: ListName) -> String { "\(listsDirectory)/\(name.rawValue).json" }
    /// The names a refresh dropped while a rule held the list; absent when none are held.
    public nonisolated func heldPath(for name: ListName) -> String { "\(listsDirectory)/\(name.rawValue).held" }
    /// Whether names of `name` are held back (the file is what is in force; the metadata says why).
    public nonisolated func hasHeldNames(_ name: ListName) -> Bool { DurableFile.exists(heldPath(for: name)) }

    /// Names the state this folder's lists were carried into (the household's list registry, kept
    /// by the state store): its location, so a helper moved to another store carries them in again.
    nonisolated var carriedInPath: String { "\(listsDirectory)/.carried-into" }

    /// The location of the state this folder's lists were carried into; nil before they were.
    public nonisolated func carriedInto() -> String? {
        guard let bytes = try? DurableFile.readAll(carriedInPath, limit: 4096) else { return nil }
        return String(decoding: bytes, as: UTF8.self)
    }

    /// Records that this folder's lists are in the state at `location` (`carriedInto`).
    public func markCarried(into location: String) throws(ListFetchError) {
        try DurableFile.ensureDirectory(listsDirectory)
        try DurableFile.write(Array(location.utf8), to: carriedInPath)
    }

    /// Refreshes `name` from `url` and returns what happened; never throws, because a failure is
    /// an outcome to record and report, not a reason to drop the copy in force.
    ///
    /// With `hold` (a rule holds the list), rules the new copy drops are written to `<name>.held`
    /// before the copy is replaced, so they stay in force until `releaseHeld` (SPEC §3).
    ///
    /// `access` is what the source's adder may read and reach; `addedBy` is recorded
    /// with a new source or a new URL, for the refreshes after this one.
    public func refresh(_ name: ListName, from url: String, progress: ProgressHandler? = nil,
                        hold: ListHold? = nil, access: SourceAccess = .administrator, addedBy: SourceAdder? = nil,
                        admit: ListAdmission? = nil) async -> RefreshReport {
        while let running = inFlight[name] {
            let report = await running.task.value
            finish(name, ticket: running.ticket)
            if running.url == url { return report }
        }
        nextTicket += 1
        let ticket = nextTicket
        let task = Task { await self.performRefresh(name, from: url, progress: progress, hold: hold, access: access, addedBy: addedBy, admit: admit) }
        inFlight[name] = InFlight(ticket: ticket, url: url, task: task)
        let report = await withTaskCancellationHandler {
            await task.value
        } onCancel: {
            task.cancel()
        }
        finish(name, ticket: ticket)
        return report
    }

    private func finish(_ name: ListName, ticket: Int) {
        if inFlight[name]?.ticket == ticket { inFlight[name] = nil }
    }

    /// The metadata of `name`, or nil when it was never refreshed.
    public func metadata(for name: ListName) throws(ListFetchError) -> ListMetadata? {
        let path = metadataPath(for: name)
        guard let bytes = try DurableFile.readAll(path) else { return nil }
        do {
            return try JSONDecoder().decode(ListMetadata.self, from: Data(bytes))
        } catch {
            throw .localFile(path: path, operation: "decode (\(error))", errno: EINVAL)
        }
    }

    /// Metadata of every stored list, by name. An unreadable record appears with an empty URL and
    /// the reason in `lastError`.
    public func allMetadata() -> [ListMetadata] {
        var all: [ListMetadata] = []
        for entry in DurableFile.entries(of: listsDirectory) where entry.hasSuffix(".json") && !entry.hasPrefix(".") {
            guard let name = try? ListName(String(entry.dropLast(".json".count))) else { continue }
            do {
                if let metadata = try metadata(for: name) { all.append(metadata) }
            } catch {
                // One unreadable record must not hide the others; show it with the reason. The
                // next refresh of that list writes a fresh record.
                var placeholder = ListMetadata(name: name, url: "")
                placeholder.lastError = error.description
                placeholder.lastErrorCode = error.code
                all.append(placeholder)
            }
        }
        return all.sorted { $0.name < $1.name }
    }

    /// Writes `<name>.held`: the rules of the copy in force and of the names held before that
    /// `newCopy` lacks. No such rule: no file, nothing held.
    private func keepDropped(_ name: ListName, newCopy: String, hold: ListHold, metadata: inout ListMetadata) async throws(ListFetchError) {
        guard let dropper else { return }
        let kept = [copyPath(for: name), heldPath(for: name)].filter(DurableFile.exists)
        guard !kept.isEmpty else { return }
        let output = try DurableFile.makeTemporaryFile(in: listsDirectory, stem: name.rawValue)
        defer { DurableFile.discard(output) }
        let heldPath = heldPath(for: name)
        let count = try await DedicatedThread.run(name: "scrolloff-list-hold") { () -> Result<Int, ListFetchError> in
            do {
                let count = try dropper(kept, newCopy, output)
                // Flushed here whatever the dropper did: the rename must not reach the disk before
                // the names do (a crash would leave an empty held file).
                if count > 0 {
                    try DurableFile.flush(output)
                    try DurableFile.replace(heldPath, with: output)
                }
                return .success(count)
            } catch let error as ListFetchError {
                return .failure(error)
            } catch {
                return .failure(.rejectedByValidation(name: name.rawValue, reason: "held names could not be written: \(error)"))
            }
        }.get()
        if count > 0 {
            metadata.held = HeldNames(count: count, until: hold.until, reason: hold.reason, since: metadata.held?.since ?? clock())
            // Names of this helper's own: not the household's until they are shared (`heldRules`).
            metadata.heldRevision = nil
        } else {
            try dropHeldFile(name)
            metadata.held = nil
        }
    }

    /// The rule lines of `<name>.held` (comments and blank lines left out) and the record's hold as
    /// it was when they were read; nil when nothing is held here. What a helper shares with the
    /// household (`ListMetadata.heldRevision` nil).
    public func heldRules(_ name: ListName) async throws(ListFetchError) -> (rules: [String], state: HeldState)? {
        let state = HeldState(try metadata(for: name))
        let path = heldPath(for: name)
        guard state.held != nil, DurableFile.exists(path) else { return nil }
        let lines = try await DedicatedThread.run(name: "scrolloff-list-hold") { () -> Result<[String], ListFetchError> in
            Result { () throws(ListFetchError) in
                // Bounded by the list bound that admitted the copies these names came from.
                guard let bytes = try DurableFile.readAll(path, limit: .max) else { return [] }
                return Self.ruleLines(bytes)
            }
        }.get()
        return (lines, state)
    }

    /// The rules of a held file: one a line; `!` and `#` lines are comments.
    static func ruleLines(_ bytes: [UInt8]) -> [String] {
        bytes.split(separator: UInt8(ascii: "\n")).compactMap { line in
            let text = String(decoding: line, as: UTF8.self).trimmingCharacters(in: .whitespacesAndNewlines)
            return text.isEmpty || text.hasPrefix("!") || text.hasPrefix("#") ? nil : text
        }
    }

    /// Brings `<name>.held` in line with the household's held names of the list, `household` (rule
    /// lines, at its `revision`): those the copy in force lacks are held here from now on, with the
    /// lock's `until`, `reason` and `since`. So a helper whose copy never had names another helper's
    /// refresh dropped blocks them too. Needs a copy and the dropper (the list format).
    ///
    /// Changes nothing (`refused`) when the list's hold moved since `expected` was read (a refresh
    /// held names of its own, which are shared first) or a refresh of it is under way (its own
    /// names are shared after it, and this is asked again then). When the names held here are the
    /// same already, only the revision is noted (`same`: nothing to put in force again).
    public func adoptHeld(_ name: ListName, household: [String], revision: Int64, until: Instant?, reason: String, since: Instant,
                          expected: HeldState) async throws(ListFetchError) -> HeldAdoption {
        guard let dropper, inFlight[name] == nil, DurableFile.exists(copyPath(for: name)) else { return .refused }
        try DurableFile.ensureDirectory(listsDirectory)
        let input = try DurableFile.makeTemporaryFile(in: listsDirectory, stem: name.rawValue)
        defer { DurableFile.discard(input) }
        let output = try DurableFile.makeTemporaryFile(in: listsDirectory, stem: name.rawValue)
        defer { DurableFile.discard(output) }
        let copy = copyPath(for: name)
        let held = heldPath(for: name)
        let (count, same) = try await DedicatedThread.run(name: "scrolloff-list-hold") { () -> Result<(Int, Bool), ListFetchError> in
            do {
                let text = "! Names the household holds while a rule holds this list; in force until the lock ends.\n"
                    + household.joined(separator: "\n") + "\n"
                try StepwiseFile.write(text, to: input)
                let count = try dropper([input], copy, output)
                // The dropper writes its rules sorted: the same names give the same bytes.
                var same = !DurableFile.exists(held)
                if count > 0 { same = try DurableFile.readAll(held, limit: .max) == DurableFile.readAll(output, limit: .max) }
                if count > 0, !same { try DurableFile.flush(output) }
                return .success((count, same))
            } catch let error as ListFetchError {
                return .failure(error)
            } catch {
                return .failure(.rejectedByValidation(name: name.rawValue, reason: "the household's held names could not be written: \(error)"))
            }
        }.get()
        // From here to the end nothing suspends: no refresh of this list runs in between.
        guard inFlight[name] == nil, var metadata = try metadata(for: name), HeldState(metadata) == expected else { return .refused }
        metadata.heldRevision = revision
        if same {
            if count == 0 { metadata.held = nil }
            try saveMetadata(metadata)
            return .same
        }
        if count > 0 {
            try DurableFile.replace(held, with: output)
            metadata.held = HeldNames(count: count, until: until, reason: reason, since: since)
        } else {
            try dropHeldFile(name)
            metadata.held = nil
        }
        try saveMetadata(metadata)
        return .replaced
    }

    /// Puts the new copy alone in force: deletes `<name>.held` and its record. Call when the
    /// rules no longer hold the list.
    public func releaseHeld(_ name: ListName) throws(ListFetchError) {
        try dropHeldFile(name)
        guard var metadata = try metadata(for: name), metadata.held != nil else { return }
        metadata.held = nil
        try saveMetadata(metadata)
    }

    /// Records a later end of the lock for names held back (a new rule holds the list now).
    public func updateHold(_ name: ListName, until: Instant?, reason: String) throws(ListFetchError) {
        guard var metadata = try metadata(for: name), var held = metadata.held, held.until != until || held.reason != reason else { return }
        held.until = until
        held.reason = reason
        metadata.held = held
        try saveMetadata(metadata)
    }

    private func dropHeldFile(_ name: ListName) throws(ListFetchError) {
        let path = heldPath(for: name)
        guard DurableFile.exists(path) else { return }
        try DurableFile.delete(path)
        try DurableFile.flushDirectory(of: path)
    }

    /// Deletes the copy and metadata of `name`, cancelling a refresh in flight.
    public func remove(_ name: ListName) throws(ListFetchError) {
        inFlight[name]?.task.cancel()
        for path in [copyPath(for: name), heldPath(for: name), metadataPath(for: name)] where DurableFile.exists(path) {
            try DurableFile.delete(path)
        }
        if DurableFile.exists(listsDirectory) { try DurableFile.flushDirectory(of: copyPath(for: name)) }
    }

    private func performRefresh(_ name: ListName, from url: String, progress: ProgressHandler?, hold: ListHold?,
                                access: SourceAccess, addedBy: SourceAdder?, admit: ListAdmission?) async -> RefreshReport {
        let started = clock()
        // Unreadable metadata must not block refreshing: start over, the copy itself is untouched.
        let stored = try? metadata(for: name)
        var metadata = stored ?? ListMetadata(name: name, url: url)
        if stored == nil { metadata.addedBy = addedBy }
        if metadata.url != url {
            // Validators belong to the old URL's resource (RFC 9110 §8.8); a new URL starts fresh.
            metadata.url = url
            metadata.validators = ConditionalValidators()
            metadata.addedBy = addedBy
        }
        let copyPath = copyPath(for: name)
        // Without a copy on disk a 304 would leave nothing to serve, so ask unconditionally.
        let validators = DurableFile.exists(copyPath) ? metadata.validators : ConditionalValidators()

        var outcome: RefreshReport.Outcome
        var fetchResult: FetchResult?
        do throws(ListFetchError) {
            try DurableFile.ensureDirectory(listsDirectory)
            removeLeftoverTemporaries(of: name)
            let temporary = try DurableFile.makeTemporaryFile(in: listsDirectory, stem: name.rawValue)
            // After a successful rename this unlink finds nothing, which is fine.
            defer { DurableFile.discard(temporary) }
            let result = try await fetcher.fetch(url, into: temporary, conditional: validators, progress: progress, access: access)
            fetchResult = result
            switch result.kind {
            case .notModified:
                metadata.recordSuccess(at: started, finished: clock(), validators: result.validators)
                outcome = .unchanged
            case .downloaded:
                let summary = try await validate(temporary, name: name)
                guard summary.entryCount > 0 else { throw .emptyList(name: name.rawValue) }
                if let admit { try await admit(summary.entryCount) }
                // `remove` cancels a refresh in flight; it must not bring the list back afterwards.
                if Task.isCancelled { throw .cancelled(url: url) }
                // Held names are on disk before the copy that drops them replaces the old one, so
                // a crash in between never opens them (at worst it holds a few names twice).
                if let hold { try await keepDropped(name, newCopy: temporary, hold: hold, metadata: &metadata) }
                try await DedicatedThread.run(name: "scrolloff-list-store") {
                    Result { () throws(ListFetchError) in try DurableFile.replace(copyPath, with: temporary) }
                }.get()
                let finished = clock()
                metadata.recordSuccess(at: started, finished: finished, validators: result.validators)
                metadata.recordNewCopy(at: finished, sizeBytes: result.bytesWritten, summary: summary)
                outcome = .updated(entryCount: summary.entryCount, sizeBytes: result.bytesWritten)
            }
        } catch {
            if case .cancelled = error {
                // Someone stopped the refresh (Ctrl-C on `lists update`, shutdown): nothing about
                // the list is known, so its record and failure count stay as they were.
                return RefreshReport(name: name, outcome: .failed(error), metadata: stored ?? ListMetadata(name: name, url: url), fetch: fetchResult)
            }
            metadata.recordFailure(error, at: started)
            outcome = .failed(error)
        }
        do {
            try saveMetadata(metadata)
        } catch {
            // The copy in force is still consistent; only the record is behind. Report it.
            if case .failed = outcome {} else { outcome = .failed(error) }
        }
        return RefreshReport(name: name, outcome: outcome, metadata: metadata, fetch: fetchResult)
    }

    private func validate(_ path: String, name: ListName) async throws(ListFetchError) -> ValidationSummary {
        let validator = self.validator
        return try await DedicatedThread.run(name: "scrolloff-list-validate") { () -> Result<ValidationSummary, ListFetchError> in
            do {
                return .success(try validator(path))
            } catch {
                return .failure(.rejectedByValidation(name: name.rawValue, reason: String(describing: error)))
            }
        }.get()
    }

    private func saveMetadata(_ metadata: ListMetadata) throws(ListFetchError) {
        let encoder = JSONEncoder()
        encoder.outputFormatting = [.prettyPrinted, .sortedKeys]
        let data: Data
        do {
            data = try encoder.encode(metadata)
        } catch {
            throw .localFile(path: metadataPath(for: metadata.name), operation: "encode (\(error))", errno: EINVAL)
        }
        try DurableFile.ensureDirectory(listsDirectory)
        try DurableFile.write([UInt8](data), to: metadataPath(for: metadata.name))
    }

    /// Temporary files of `name` left by a crash mid-download (`.<name>.XXXXXX.part`). Exact
    /// length matching keeps `a` from touching the files of `a.b`.
    private func removeLeftoverTemporaries(of name: ListName) {
        let prefix = ".\(name.rawValue)."
        for entry in DurableFile.entries(of: listsDirectory)
        where entry.hasPrefix(prefix) && entry.hasSuffix(".part") && entry.utf8.count == prefix.utf8.count + 6 + 5 {
            DurableFile.discard("\(listsDirectory)/\(entry)")
        }
    }
}
