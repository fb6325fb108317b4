import NIOCore
import ScrollOffCore

/// `[web]`'s bounds against slow clients and password guessers (SPEC §9a), read by `FileSections`
/// and taken at start.
public struct WebSettings: Sendable, Equatable {
    /// `request_timeout`: a connection must send a whole request (head and body) within this of
    /// opening or of its last answer, or it is closed. A browser sends its request at once; only
    /// a client holding a slot on purpose (a header byte a second) ever reaches it.
    public var requestTimeout: Span = .seconds(5)
    /// `sign_in_max_delay`: the longest wait between sign-in tries for one owner's name after wrong
    /// passwords in a row (`SignInBackoff`): a guesser gets about 3600 / this many tries an hour,
    /// the owner waits at most this long.
    public var signInMaximumDelay: Span = .minutes(5)

    public static let requestTimeoutRange = Span.seconds(1) ... .seconds(60)
    public static let signInMaximumDelayRange = Span.seconds(1) ... .hours(1)
    static let defaultRequestTimeout = TimeAmount.milliseconds(WebSettings().requestTimeout.milliseconds)

    public init() {}

    package var requestTimeoutAmount: TimeAmount { .milliseconds(requestTimeout.milliseconds) }
}
