/// Which "when [trigger], I will [alternative]" plan fits the moment of a bypass best (SPEC §8:
/// "a peek or a spend shows the person's matching plan first"). Pure: the helper passes the local
/// time, weekday and entry of the moment, and the plans' trigger texts.
///
/// The trigger is free text, so it is read for three kinds of cue, each worth points when it fits
/// the moment and costing the same when it names another moment:
///
/// | cue | examples in the trigger | fits when | points |
/// |---|---|---|---|
/// | entry | "instagram", "YouTube" (an entry's id or name) | the bypass is for that entry | ±4 |
/// | time of day | "morning", "after lunch", "evening", "at night", "can't sleep", "22:00", "10pm" | the local time is in that part of the day (an explicit time: from 1 h before to 2 h after it) | ±2 |
/// | weekday | "monday"…"sunday", "weekend", "weekday", "school day" | the local weekday is one of those | ±1 |
///
/// A trigger with no cue ("I feel bored") scores 0 and fits any moment. A plan scoring below 0
/// names another moment and is not shown; among the rest the highest score wins, ties going to
/// the plan made most recently. Parts of the day: morning 05–12, lunch 11–14, afternoon 12–18,
/// evening 17–23, night 21–05 (hours, local, end excluded).
public enum PlanTrigger {
    /// The moment of a bypass, in the profile's zone.
    public struct Moment: Hashable, Sendable {
        /// Minutes since local midnight, 0…1439.
        public var minuteOfDay: Int
        /// Local weekday, 1 = Sunday … 7 = Saturday (as `LocalCalendar.weekday(of:)`).
        public var weekday: Int
        /// The entry asked for, with its names (the entry id first, then e.g. the service's name);
        /// nil when the moment has no entry (a preview without one).
        public var entryNames: [String]?

        public init(minuteOfDay: Int, weekday: Int, entryNames: [String]?) {
            self.minuteOfDay = minuteOfDay
            self.weekday = weekday
            self.entryNames = entryNames
        }
    }

    public static let entryPoints = 4
    public static let timePoints = 2
    public static let weekdayPoints = 1

    /// The trigger's score at `moment`. `knownEntryNames` are the names of every entry people can
    /// name (ids and display names), so a trigger naming another entry counts against the plan.
    public static func score(_ trigger: String, at moment: Moment, knownEntryNames: [String]) -> Int {
        let words = Self.words(trigger)
        let text = " " + words.joined(separator: " ") + " "
        var score = 0
        // Entry: does the trigger name an entry, and is it this one?
        let named = knownEntryNames.filter { Self.contains(text, phrase: $0) }
        if !named.isEmpty {
            let mine = Set((moment.entryNames ?? []).map { Self.words($0).joined(separator: " ") })
            let fits = named.contains { mine.contains(Self.words($0).joined(separator: " ")) }
            score += fits ? entryPoints : -entryPoints
        }
        // Time of day.
        let spans = timeSpans(text, words: words)
        if !spans.isEmpty {
            let fits = spans.contains { $0.contains(moment.minuteOfDay) }
            score += fits ? timePoints : -timePoints
        }
        // Weekday.
        let days = weekdays(words)
        if !days.isEmpty { score += days.contains(moment.weekday) ? weekdayPoints : -weekdayPoints }
        return score
    }

    /// The index of the plan to show among `candidates` (trigger text and creation order, larger =
    /// more recent), or nil when every plan names another moment.
    public static func best<Recency: Comparable>(_ candidates: [(trigger: String, recency: Recency)], at moment: Moment,
                                                 knownEntryNames: [String]) -> Int? {
        var best: (index: Int, score: Int, recency: Recency)?
        for (i, c) in candidates.enumerated() {
            let s = score(c.trigger, at: moment, knownEntryNames: knownEntryNames)
            guard s >= 0 else { continue }
            if let b = best, (s, c.recency) <= (b.score, b.recency) { continue }
            best = (i, s, c.recency)
        }
        return best?.index
    }

    // MARK: Reading the trigger

    /// A span of the day in minutes, which may cross midnight (`start > end`).
    struct DaySpan: Hashable {
        var start: Int
        var end: Int
        func contains(_ minute: Int) -> Bool {
            start <= end ? (minute >= start && minute < end) : (minute >= start || minute < end)
        }
        static func hours(_ a: Int, _ b: Int) -> DaySpan { DaySpan(start: a * 60, end: (b % 24) * 60) }
    }

    /// Parts of the day people name, by the words that name them.
    static let parts: [(phrases: [String], span: DaySpan)] = [
        (["morning", "mornings", "wake up", "waking up", "breakfast", "before school", "before work"], .hours(5, 12)),
        (["lunch", "lunchtime", "noon", "midday"], .hours(11, 14)),
        (["afternoon", "afternoons", "after school"], .hours(12, 18)),
        (["evening", "evenings", "dinner", "after dinner", "after work"], .hours(17, 23)),
        (["night", "nights", "tonight", "bed", "bedtime", "in bed", "cant sleep", "can t sleep", "cannot sleep", "sleepless", "late at night"], .hours(21, 5)),
    ]

    static func timeSpans(_ text: String, words: [String]) -> [DaySpan] {
        var spans = parts.filter { part in part.phrases.contains { contains(text, phrase: $0) } }.map(\.span)
        for minute in explicitTimes(words) {
            // From an hour before to two hours after the time named.
            spans.append(DaySpan(start: (minute - 60 + 1440) % 1440, end: (minute + 120) % 1440))
        }
        return spans
    }

    /// "22:00", "22 00" (the colon is a separator after `words`), "10pm", "10 pm", "7am", "22h".
    static func explicitTimes(_ words: [String]) -> [Int] {
        var out: [Int] = []
        var i = 0
        while i < words.count {
            let w = words[i]
            let next = i + 1 < words.count ? words[i + 1] : ""
            if let h = Int(w), (0...23).contains(h), w.count <= 2, next.count == 2, let m = Int(next), (0...59).contains(m) {
                // "22 00" came from "22:00" (or "22.00").
                var hour = h
                let after = i + 2 < words.count ? words[i + 2] : ""
                if after == "pm", hour < 12 { hour += 12 } else if after == "am", hour == 12 { hour = 0 }
                out.append(hour * 60 + m)
                i += 2
                continue
            }
            for suffix in ["am", "pm", "h"] where w.hasSuffix(suffix) {
                if let h = Int(w.dropLast(suffix.count)), h >= 0, h <= (suffix == "h" ? 23 : 12) {
                    out.append(hour(h, suffix) * 60)
                }
            }
            if let h = Int(w), h >= 1, h <= 12, next == "am" || next == "pm" { out.append(hour(h, next) * 60) }
            i += 1
        }
        return out
    }

    private static func hour(_ h: Int, _ suffix: String) -> Int {
        switch suffix {
        case "pm": h == 12 ? 12 : h + 12
        case "am": h == 12 ? 0 : h
        default: h
        }
    }

    static let dayNames = ["sunday", "monday", "tuesday", "wednesday", "thursday", "friday", "saturday"]

    static func weekdays(_ words: [String]) -> Set<Int> {
        var days = Set<Int>()
        for w in words {
            let singular = w.hasSuffix("s") ? String(w.dropLast()) : w
            if let i = dayNames.firstIndex(of: singular) { days.insert(i + 1) }
            if singular == "weekend" { days.formUnion([1, 7]) }
            if singular == "weekday" || singular == "workday" || singular == "schoolday" { days.formUnion(2...6) }
        }
        let text = " " + words.joined(separator: " ") + " "
        if contains(text, phrase: "school day") || contains(text, phrase: "work day") { days.formUnion(2...6) }
        return days
    }

    /// Lower-case words of letters and digits; everything else (apostrophes, colons) separates.
    static func words(_ text: String) -> [String] {
        text.lowercased().split { !($0.isLetter || $0.isNumber) }.map(String.init)
    }

    /// Whether the space-padded word text holds `phrase` as whole words.
    static func contains(_ paddedText: String, phrase: String) -> Bool {
        let p = words(phrase).joined(separator: " ")
        guard !p.isEmpty else { return false }
        return paddedText.contains(" " + p + " ")
    }
}
