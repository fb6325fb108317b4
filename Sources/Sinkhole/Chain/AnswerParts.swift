/// What a replay needs of a stored answer (RFC 1035 §7.4): its wire bytes with ID 0 and the
/// question lowercased, where its sections and TTLs sit, and the names its CNAMEs point to.
///
/// A value, so that a cache hit can copy an answer out of the cache's log into buffers the query's
/// context keeps (`QueryContext.cached`) and render it after the cache's lock is let go, without
/// allocating once those buffers are warm.
public struct AnswerParts: Sendable {
    /// The reply as stored: ID 0, no OPT record, the question name lowercased.
    var wire: [UInt8] = []
    /// Where each record's TTL sits in `wire` (a reply is at most 65,535 octets, RFC 1035 §4.2.2).
    var ttlOffsets: [UInt16] = []
    /// The lowercased, uncompressed wire names the answer's CNAMEs point to, one after another
    /// (each ends with its root label), checked against the rules at every replay (SPEC §9).
    var cnameNames: [UInt8] = []
    /// Octets of the question name; the replay copies the asker's spelling over it (0x20).
    var nameLength = 0
    /// End of the question; an answer truncated to nothing keeps this much (RFC 1035 §4.2.1).
    var questionEnd = 0
    /// Start of the additional section, which may be dropped without TC (RFC 2181 §9).
    var additionalStart = 0
    /// Monotonic nanoseconds when it arrived; replayed TTLs count down from it.
    var receivedAt: UInt64 = 0
    /// An expired answer given again because every upstream failed (RFC 8767).
    var isStale = false

    init() {}

    init(
        wire: [UInt8], ttlOffsets: [UInt16], cnameNames: [UInt8], nameLength: Int, questionEnd: Int, additionalStart: Int,
        receivedAt: UInt64, isStale: Bool
    ) {
        self.wire = wire
        self.ttlOffsets = ttlOffsets
        self.cnameNames = cnameNames
        self.nameLength = nameLength
        self.questionEnd = questionEnd
        self.additionalStart = additionalStart
        self.receivedAt = receivedAt
        self.isStale = isStale
    }

    /// Calls `body` with each CNAME target in `cnameNames`, in order.
    func forEachCNAMETarget(_ body: (ArraySlice<UInt8>) -> Void) {
        var start = 0
        while start < cnameNames.count {
            guard let end = WireLayout.skipName(cnameNames, from: start) else { return }
            body(cnameNames[start..<end])
            start = end
        }
    }
}
