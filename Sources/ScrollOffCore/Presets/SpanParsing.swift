extension SpanWords {
    /// Reads a length of time written with units, the way people and configuration files write
    /// it: `2h`, `90min`, `30s`, `1h30m`, `1 h 30 min` (what ``describe(_:rounding:)`` prints, so a
    /// value quoted in a message can be pasted back), `7d`, `500ms`. A bare `0` is zero.
    ///
    /// Units, each at most once and largest first: `d`, `h`, `min` (or `m`), `s`, `ms`. Each number
    /// is whole and at most 1 000 000, so no sum can overflow. The CLI's `--for 45m` and every
    /// duration of `scrolloff.toml` go through here, so both accept the same words.
    /// - Returns: nil when `text` is not such a length.
    public static func parse(_ text: String) -> Span? {
        let bytes = Array(text.lowercased().utf8)
        if bytes.count == 1, bytes[0] == UInt8(ascii: "0") { return .zero }
        var index = 0
        var total: Int64 = 0
        var lastRank = 0
        var parts = 0
        func skipSpaces() { while index < bytes.count, bytes[index] == UInt8(ascii: " ") { index += 1 } }
        skipSpaces()
        while index < bytes.count {
            let numberStart = index
            while index < bytes.count, (UInt8(ascii: "0")...UInt8(ascii: "9")).contains(bytes[index]) { index += 1 }
            guard index > numberStart, index - numberStart <= 7,
                  let value = Int64(String(decoding: bytes[numberStart..<index], as: UTF8.self)), value <= 1_000_000
            else { return nil }
            skipSpaces()
            let unitStart = index
            while index < bytes.count, (UInt8(ascii: "a")...UInt8(ascii: "z")).contains(bytes[index]) { index += 1 }
            guard let (rank, milliseconds) = unit(String(decoding: bytes[unitStart..<index], as: UTF8.self)),
                  rank > lastRank
            else { return nil }
            total += value * milliseconds
            lastRank = rank
            parts += 1
            skipSpaces()
        }
        return parts > 0 ? Span(milliseconds: total) : nil
    }

    /// The rank (order in which units must appear) and the length in milliseconds of a unit word.
    private static func unit(_ word: String) -> (Int, Int64)? {
        switch word {
        case "d": (1, 86_400_000)
        case "h": (2, 3_600_000)
        case "m", "min": (3, 60_000)
        case "s": (4, 1000)
        case "ms": (5, 1)
        default: nil
        }
    }
}
