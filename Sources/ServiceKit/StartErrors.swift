/// Start-up failed; the message says what to change.
public struct HelperStartError: Error, Sendable, CustomStringConvertible {
    public var description: String
    public init(_ description: String) { self.description = description }
}

/// A reload was refused before anything changed; the message says what to fix.
public struct ConfigurationRejected: Error, Sendable, CustomStringConvertible {
    public var description: String
    public init(_ description: String) { self.description = description }
}
