import Synchronization

/// Holds the matcher in force and swaps it whole. A reader gets either the old matcher or the new
/// one, never a mix: matchers are immutable and the swap replaces one reference under a mutex.
///
/// The lock is held only to copy or replace a reference (a few nanoseconds); the replaced matcher
/// is released after the lock is dropped, so freeing a million-name table never stalls readers.
public final class MatcherBox: Sendable {
    private let current: Mutex<DomainMatcher>

    public init(_ matcher: DomainMatcher = DomainMatcher()) {
        current = Mutex(matcher)
    }

    /// The matcher in force. Hold on to it for the whole of one query, so that the query sees one list.
    public var matcher: DomainMatcher {
        current.withLock { $0 }
    }

    /// Puts `matcher` in force for every later reader.
    public func publish(_ matcher: DomainMatcher) {
        let previous = current.withLock { held -> DomainMatcher in
            let previous = held
            held = matcher
            return previous
        }
        _ = previous
    }
}
