/// How many queries one client address may send, as a token bucket: `queriesPerSecond` refill,
/// up to `burst` at once. Beyond it the client is answered REFUSED (RFC 1035 §4.1.1 rcode 5) so a
/// runaway device cannot starve the rest of a household; nil in `HelperConfiguration` turns it off.
public struct RateLimit: Sendable, Equatable {
    public var queriesPerSecond: Int
    public var burst: Int

    public init(queriesPerSecond: Int, burst: Int) {
        self.queriesPerSecond = max(queriesPerSecond, 1)
        self.burst = max(burst, 1)
    }
}
