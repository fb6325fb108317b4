/// A hosts file split around its managed section, byte for byte (SPEC §10).
///
/// The file is kept as raw bytes, never decoded or re-encoded, so everything outside the section
/// survives exactly: CRLF or LF line endings, a missing final line break, comments, tabs, odd
/// spacing and any non-UTF-8 byte. Only lines are looked at, and only to find the two markers.
public struct HostsLayout: Equatable, Sendable {
    /// The whole file as read.
    public let bytes: [UInt8]
    /// The byte range of the managed section, from the start of its BEGIN line to the end of its
    /// END line (line break included); nil when the file has none.
    public let section: Range<Int>?

    /// The line break the file uses: CRLF when its first line ends with one, LF otherwise
    /// (also for an empty file or one with a single unterminated line).
    public let lineBreak: LineBreak

    public enum LineBreak: String, Sendable {
        case lf = "\n"
        case crlf = "\r\n"
        var bytes: [UInt8] { Array(rawValue.utf8) }
    }

    /// Splits `bytes` into the parts before, inside and after the managed section.
    /// - Throws: `HostsFileError.damagedSection` for a BEGIN without END, two BEGINs, an END before
    ///   any BEGIN or a second section: the file is never guessed at (SPEC §10).
    public init(parsing bytes: [UInt8]) throws(HostsFileError) {
        self.bytes = bytes
        var begin: (line: Int, offset: Int)?
        var found: Range<Int>?
        var lineBreak: LineBreak?
        var lineNumber = 0
        var start = 0
        let count = bytes.count
        // memchr finds each line break, and only lines whose first non-blank byte is `#` are
        // compared with the markers: a 100,000-name section is split in a few milliseconds.
        let damage: HostsFileError.Damage? = bytes.withUnsafeBufferPointer { all in
            guard let base = all.baseAddress else { return nil }
            while start < count {
                lineNumber += 1
                let end = memchr(base + start, 0x0A, count - start).map { UnsafePointer($0.assumingMemoryBound(to: UInt8.self)) - base } ?? count
                let next = end < count ? end + 1 : end
                if lineBreak == nil, end < count { lineBreak = (end > start && base[end - 1] == 0x0D) ? .crlf : .lf }
                var first = start
                while first < end, base[first] == 0x20 || base[first] == 0x09 { first += 1 }
                if first < end, base[first] == 0x23 {
                    switch HostsMarker.classify(UnsafeBufferPointer(rebasing: all[start..<end])) {
                    case .begin:
                        if let begin { return .twoBegins(first: begin.line, second: lineNumber) }
                        if found != nil { return .twoSections(secondBegin: lineNumber) }
                        begin = (lineNumber, start)
                    case .end:
                        guard let open = begin else { return .endWithoutBegin(end: lineNumber) }
                        found = open.offset..<next
                        begin = nil
                    case .other:
                        break
                    }
                }
                start = next
            }
            return begin.map { .beginWithoutEnd(begin: $0.line) }
        }
        if let damage { throw .damagedSection(damage) }
        section = found
        self.lineBreak = lineBreak ?? .lf
    }

    /// The bytes before the section (the whole file when there is none).
    public var before: ArraySlice<UInt8> { bytes[..<(section?.lowerBound ?? bytes.count)] }
    /// The section's bytes, markers included; empty when there is none.
    public var managed: ArraySlice<UInt8> { section.map { bytes[$0] } ?? [] }
    /// The bytes after the section; empty when there is none.
    public var after: ArraySlice<UInt8> { bytes[(section?.upperBound ?? bytes.count)...] }

    /// Whether the section is where Scroll Off puts it: the first line of the file (or there is none).
    public var sectionIsFirst: Bool { (section?.lowerBound ?? 0) == 0 }

    /// The file with `newSection` at the top and everything outside the old section after it,
    /// byte for byte and in its order. An empty `newSection` removes the section.
    ///
    /// Always the top, also for a section someone moved down: glibc stops at the first line naming
    /// a host unless `/etc/host.conf` says `multi on`, so there a line of the user's own for
    /// `instagram.com` above the section would answer instead of the block. (With `multi on`,
    /// Debian's default, every matching line answers wherever it is: ``linesNaming(_:)`` finds
    /// them so that `doctor` can name them; Scroll Off never edits a line outside its section.)
    /// The top also needs no line break added to a file whose last line has none, so removing the
    /// section gives the original back.
    public func replacingSection(with newSection: [UInt8]) -> [UInt8] {
        var out: [UInt8] = []
        out.reserveCapacity(bytes.count - managed.count + newSection.count)
        out.append(contentsOf: newSection)
        out.append(contentsOf: before)
        out.append(contentsOf: after)
        return out
    }

    /// Whether writing `newSection` would leave the file as it is: the section already holds those
    /// bytes and is first. Answered without building the new file.
    public func alreadyHolds(_ newSection: [UInt8]) -> Bool {
        if newSection.isEmpty { return section == nil }
        guard sectionIsFirst, managed.count == newSection.count else { return false }
        return managed.withUnsafeBufferPointer { a in newSection.withUnsafeBufferPointer { b in memcmp(a.baseAddress!, b.baseAddress!, a.count) == 0 } }
    }

    /// The file without the managed section (`scrolloff-dns hosts remove`).
    public func removingSection() -> [UInt8] { replacingSection(with: []) }
}

/// The two marker lines of the managed section.
public enum HostsMarker {
    public static let begin = "# BEGIN scrolloff"
    public static let end = "# END scrolloff"

    enum Kind { case begin, end, other }

    /// A line is a marker when, without its CR and surrounding blanks, it is exactly a marker: a
    /// comment that merely mentions scrolloff is the user's and stays theirs.
    static func classify(_ line: UnsafeBufferPointer<UInt8>) -> Kind {
        var lo = line.startIndex, hi = line.endIndex
        func isBlank(_ b: UInt8) -> Bool { b == 0x20 || b == 0x09 || b == 0x0D }
        while lo < hi, isBlank(line[lo]) { lo += 1 }
        while hi > lo, isBlank(line[hi - 1]) { hi -= 1 }
        let text = UnsafeBufferPointer(rebasing: line[lo..<hi])
        if text.elementsEqual(begin.utf8) { return .begin }
        if text.elementsEqual(end.utf8) { return .end }
        return .other
    }
}

#if canImport(Glibc)
import Glibc
#elseif canImport(Musl)
import Musl
#else
import Darwin
#endif
