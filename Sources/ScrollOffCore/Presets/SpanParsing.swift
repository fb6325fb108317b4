extension SpanWords {
    /// Reads a length of time written with units, the way people and configuration files write
    /// it: `2h`, `90min`, `30s`, `1h30m`, `1 h 30 min` (what ``describe(_:rounding:)`` prints, so a
    /// value quoted in a message can be pasted back), `7d`, `500ms`, and in words: `10 minutes`,
    /// `2 hours`, `1 hour 30 minutes`. A bare `0` is zero.
    ///
    /// Units, each at most once and largest first: `d` (`day`, `days`), `h` (`hr`, `hrs`, `hour`,
    /// `hours`), `min` (`m`, `mins`, `minute`, `minutes`), `s` (`sec`, `secs`, `second`,
    /// `seconds`), `ms`. A last number without a unit counts in the unit below the one before it,
    /// as people write a clock: `1h30` is 1 h 30 min, `2m15` 2 min 15 s, `1d6` 1 d 6 h; it must be
    /// below that unit's next step (`1h90` is refused). Each number is whole and at most 1 000 000,
    /// so no sum can overflow. The CLI's `--for 45m` and every duration of `scrolloff.toml` go
    /// through here, so both accept the same words.
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
            let rank: Int, milliseconds: Int64
            if unitStart == index, index == bytes.count, let implied = impliedUnit(after: lastRank), value < implied.steps {
                // `1h30`: the unit below the last one, counted like a clock.
                (rank, milliseconds) = (lastRank + 1, implied.milliseconds)
            } else if let (r, ms) = unit(String(decoding: bytes[unitStart..<index], as: UTF8.self)) {
                (rank, milliseconds) = (r, ms)
            } else {
                return nil
            }
            guard rank > lastRank else { return nil }
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
        case "d", "day", "days": (1, 86_400_000)
        case "h", "hr", "hrs", "hour", "hours": (2, 3_600_000)
        case "m", "min", "mins", "minute", "minutes": (3, 60_000)
        case "s", "sec", "secs", "second", "seconds": (4, 1000)
        case "ms": (5, 1)
        default: nil
        }
    }

    /// Whether `word` is a unit word of ``parse(_:)`` (so `10` `minutes`, typed as two words on a
    /// command line, can be read as one length).
    public static func isUnitWord(_ word: String) -> Bool {
        unit(word.lowercased()) != nil
    }

    /// The unit a unit-less last number takes after a unit of rank `rank` (days → hours, hours →
    /// minutes, minutes → seconds), with how many of it make the next larger unit.
    private static func impliedUnit(after rank: Int) -> (milliseconds: Int64, steps: Int64)? {
        switch rank {
        case 1: (3_600_000, 24)
        case 2: (60_000, 60)
        case 3: (1000, 60)
        default: nil
        }
    }
}
