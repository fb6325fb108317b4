#if canImport(Glibc)
import Glibc
#elseif canImport(Darwin)
import Darwin
#endif

/// A streaming parser for block lists in plain, hosts, adblock and wildcard formats, mixed freely.
///
/// Feed bytes in chunks of any size as they arrive (`consume`), then call `finish`, which applies
/// the bad-line budget: within it, you get the rules and a report of every bad line with its line
/// number; beyond it, a `ListParseError` and no rules, so the caller keeps its previous copy
/// (ARCHITECTURE principle 5). Lines end in LF or CRLF; a UTF-8 byte order mark on the first line is
/// dropped. Memory grows with the rules kept, not with the input: a line is parsed where it lies in
/// the chunk, and only a line split across two chunks is copied.
public struct ListParser {
    public let options: ListParseOptions
    private var classifier = LineClassifier()
    private var pending: [UInt8] = []
    /// Length of the current partial line, which may exceed what `pending` keeps.
    private var pendingLength = 0
    private var lineCount = 0
    private var formats = FormatCounts()
    private var badLines: [BadLine] = []
    private var badLineCount = 0

    public init(options: ListParseOptions = ListParseOptions()) {
        self.options = options
    }

    /// Parses the next bytes of the source.
    public mutating func consume(_ chunk: UnsafeRawBufferPointer) {
        guard let base = chunk.baseAddress?.assumingMemoryBound(to: UInt8.self) else { return }
        let count = chunk.count
        var lineStart = 0
        var lines = 0
        while lineStart < count {
            // A 1 MiB chunk is 30,000 lines or more: its parse yields on the way (SPEC §9.10).
            lines &+= 1
            if lines & 255 == 0 { CooperativeYield.point() }
            guard let found = memchr(base + lineStart, 0x0A, count - lineStart) else { break }
            let newline = base.distance(to: found.assumingMemoryBound(to: UInt8.self))
            let piece = UnsafeBufferPointer(start: base + lineStart, count: newline - lineStart)
            if pendingLength > 0 {
                appendPending(piece)
                finishPendingLine()
            } else {
                processLine(piece, length: piece.count)
            }
            lineStart = newline + 1
        }
        if lineStart < count {
            appendPending(UnsafeBufferPointer(start: base + lineStart, count: count - lineStart))
        }
    }

    public mutating func consume(_ bytes: [UInt8]) {
        bytes.withUnsafeBytes { consume($0) }
    }

    public mutating func consume(_ text: String) {
        var text = text
        text.withUTF8 { consume(UnsafeRawBufferPointer($0)) }
    }

    /// Ends the source: parses a last line without a newline and applies the budget.
    public consuming func finish() throws(ListParseError) -> ParsedList {
        if pendingLength > 0 { finishPendingLine() }
        guard options.budget.allows(badLines: badLineCount, of: lineCount) else {
            throw .tooManyBadLines(count: badLineCount, lines: lineCount, budget: options.budget, examples: badLines)
        }
        if classifier.rules.isEmpty, !options.allowEmpty {
            throw .noRules(lines: lineCount)
        }
        return ParsedList(
            rules: classifier.rules, lineCount: lineCount, formats: formats, skipped: classifier.skipped,
            badLines: badLines, badLineCount: badLineCount
        )
    }

    // MARK: one-call forms

    public static func parse(_ bytes: [UInt8], options: ListParseOptions = ListParseOptions()) throws(ListParseError) -> ParsedList {
        var parser = ListParser(options: options)
        parser.consume(bytes)
        return try parser.finish()
    }

    public static func parse(_ text: String, options: ListParseOptions = ListParseOptions()) throws(ListParseError) -> ParsedList {
        var parser = ListParser(options: options)
        parser.consume(text)
        return try parser.finish()
    }

    /// The most of a file's size `parse(contentsOfFile:)` reserves for names up front: the
    /// download limit (`FetchPolicy.defaultMaxBytes`), which every fetched copy is within. A bigger
    /// file still parses; its storage grows as names are kept.
    static let maxReservedBytes = 64 << 20

    /// Reads and parses a file in 1 MiB chunks, so the file is never held whole in memory.
    public static func parse(contentsOfFile path: String, options: ListParseOptions = ListParseOptions()) throws(ListParseError) -> ParsedList {
        let descriptor = open(path, O_RDONLY | O_CLOEXEC)
        guard descriptor >= 0 else { throw .unreadable(path: path, errno: errno) }
        defer { close(descriptor) }
        var parser = ListParser(options: options)
        var info = stat()
        if fstat(descriptor, &info) == 0, info.st_size > 0 {
            // Names take at most the file's bytes; a list line is rarely under 16 bytes. The size
            // is only a hint, so it is capped: a file larger than memory (sparse, or junk) must be
            // read and reported as a bad list, not abort the process in one huge allocation.
            let size = min(Int(info.st_size), Self.maxReservedBytes)
            parser.classifier.rules.reserveCapacity(nameBytes: size, rules: size / 16)
        }
        let chunkSize = 1 << 20
        let buffer = UnsafeMutableRawBufferPointer.allocate(byteCount: chunkSize, alignment: 16)
        defer {
            // In steps, like every large buffer a refresh frees (`PageRelease`, SPEC §9.10).
            PageRelease.discard(buffer.baseAddress!, bytes: chunkSize)
            buffer.deallocate()
        }
        while true {
            let got = read(descriptor, buffer.baseAddress, chunkSize)
            if got == 0 { break }
            if got < 0 {
                if errno == EINTR { continue }
                throw .unreadable(path: path, errno: errno)
            }
            parser.consume(UnsafeRawBufferPointer(rebasing: buffer[0..<got]))
        }
        return try parser.finish()
    }

    // MARK: lines

    private mutating func appendPending(_ piece: UnsafeBufferPointer<UInt8>) {
        pendingLength += piece.count
        // Past the line limit the line is bad anyway; keep counting its length, stop copying it.
        let room = options.maxLineLength + 1 - pending.count
        if room > 0 { pending.append(contentsOf: UnsafeBufferPointer(rebasing: piece.prefix(room))) }
    }

    private mutating func finishPendingLine() {
        let length = pendingLength
        let line = pending
        pending.removeAll(keepingCapacity: true)
        pendingLength = 0
        line.withUnsafeBufferPointer { processLine($0, length: length) }
    }

    private mutating func processLine(_ line: UnsafeBufferPointer<UInt8>, length: Int) {
        lineCount += 1
        guard length <= options.maxLineLength else {
            recordBad(.lineTooLong(bytes: length))
            return
        }
        var line = line
        if lineCount == 1, line.count >= 3, line[0] == 0xEF, line[1] == 0xBB, line[2] == 0xBF {
            line = UnsafeBufferPointer(rebasing: line[3...])
        }
        switch classifier.classify(line) {
        case .skipped:
            break
        case .rules(let format):
            formats[format] += 1
        case .bad(let reason):
            recordBad(reason)
        }
    }

    private mutating func recordBad(_ reason: BadLineReason) {
        badLineCount += 1
        if badLines.count < options.maxReportedBadLines {
            badLines.append(BadLine(lineNumber: lineCount, reason: reason))
        }
    }
}
