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
        while start < bytes.count {
            lineNumber += 1
            var end = start
            while end < bytes.count, bytes[end] != 0x0A { end += 1 }
            let next = end < bytes.count ? end + 1 : end
            if lineBreak == nil, end < bytes.count { lineBreak = (end > start && bytes[end - 1] == 0x0D) ? .crlf : .lf }
            switch HostsMarker.classify(bytes[start..<end]) {
            case .begin:
                if let begin { throw .damagedSection(.twoBegins(first: begin.line, second: lineNumber)) }
                if found != nil { throw .damagedSection(.twoSections(secondBegin: lineNumber)) }
                begin = (lineNumber, start)
            case .end:
                guard let open = begin else { throw .damagedSection(.endWithoutBegin(end: lineNumber)) }
                found = open.offset..<next
                begin = nil
            case .other:
                break
            }
            start = next
        }
        if let begin { throw .damagedSection(.beginWithoutEnd(begin: begin.line)) }
        section = found
        self.lineBreak = lineBreak ?? .lf
    }

    /// The bytes before the section (the whole file when there is none).
    public var before: ArraySlice<UInt8> { bytes[..<(section?.lowerBound ?? bytes.count)] }
    /// The section's bytes, markers included; empty when there is none.
    public var managed: ArraySlice<UInt8> { section.map { bytes[$0] } ?? [] }
    /// The bytes after the section; empty when there is none.
    public var after: ArraySlice<UInt8> { bytes[(section?.upperBound ?? bytes.count)...] }

    /// The file with `newSection` in place of the managed section, everything else untouched.
    ///
    /// A file with no section gets it at the top: `gethostbyname` reads the first line naming a
    /// host, so there a line of the user's own for `instagram.com` further down cannot shadow the
    /// block (`getaddrinfo` gathers every line and returns both: the README says so). The top also
    /// needs no line break added to a file whose last line has none, so removing the section gives
    /// the original back.
    /// An empty `newSection` removes the section.
    public func replacingSection(with newSection: [UInt8]) -> [UInt8] {
        var out: [UInt8] = []
        out.reserveCapacity(bytes.count - managed.count + newSection.count)
        if section == nil {
            out.append(contentsOf: newSection)
            out.append(contentsOf: bytes)
        } else {
            out.append(contentsOf: before)
            out.append(contentsOf: newSection)
            out.append(contentsOf: after)
        }
        return out
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
    static func classify(_ line: ArraySlice<UInt8>) -> Kind {
        var lo = line.startIndex, hi = line.endIndex
        func isBlank(_ b: UInt8) -> Bool { b == 0x20 || b == 0x09 || b == 0x0D }
        while lo < hi, isBlank(line[lo]) { lo += 1 }
        while hi > lo, isBlank(line[hi - 1]) { hi -= 1 }
        let text = line[lo..<hi]
        if text.elementsEqual(begin.utf8) { return .begin }
        if text.elementsEqual(end.utf8) { return .end }
        return .other
    }
}
