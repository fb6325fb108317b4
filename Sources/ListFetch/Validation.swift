/// What a list parser reports about a downloaded copy. ListFetch knows no list format: the helper
/// passes a `ListValidator` backed by the DomainLists parser, which decides whether a copy is
/// usable (within its bad-line budget) and counts what it found.
public struct ValidationSummary: Sendable, Equatable, Codable {
    /// One line the parser could not use, for `scrolloff lists list`.
    public struct BadLine: Sendable, Equatable, Codable {
        public var lineNumber: Int
        public var text: String
        public var reason: String

        public init(lineNumber: Int, text: String, reason: String) {
            self.lineNumber = lineNumber
            self.text = text
            self.reason = reason
        }
    }

    public var entryCount: Int
    public var badLineCount: Int
    /// The first bad lines; `badLineCount` counts them all.
    public var badLines: [BadLine]

    public init(entryCount: Int, badLineCount: Int = 0, badLines: [BadLine] = []) {
        self.entryCount = entryCount
        self.badLineCount = badLineCount
        self.badLines = badLines
    }
}

/// Checks a downloaded copy at the given path before it may replace the stored one. Throws to
/// reject it (say, more bad lines than the error budget); the error's description becomes the
/// reason shown to the user. Runs on a dedicated thread, so it may take its time on a big list.
public typealias ListValidator = @Sendable (_ downloadedFile: String) throws -> ValidationSummary
