/// The 16 h curfew cap over the joined coverage of an entry (SPEC §2): curfews that touch or
/// overlap — 23:00–07:00 and 07:00–15:00, or two days of one schedule running into each other —
/// count as one curfew, and that one may last at most 960 minutes. One schedule alone is capped by
/// `Schedule.validate`; this rule catches the caps that only break when schedules join up.
///
/// Time is measured the way a single curfew's cap is: in local wall minutes of the schedules'
/// zone, so a legal 16 h curfew stays legal on the night the clocks go back (it then lasts 17 h of
/// real time, as any single curfew does). Curfews of one entry in different zones (a profile whose
/// zone changed between two `schedule add`s) share no wall clock; they are joined in real time over
/// the coming 53 weeks, DST nights included, which is the stricter reading.
public enum CurfewJoin {
    /// A joined run of curfew time longer than the cap.
    public struct Overrun: Hashable, Sendable {
        /// The entry whose names would stay in curfew that long; nil for a run of strict curfews
        /// alone, which hold every name.
        public var entry: EntryID?
        /// The schedules that join up into the run, by name.
        public var schedules: [String]
        /// The run's length in minutes (10,080 or more: the run never ends).
        public var minutes: Int
    }

    static let minutesPerWeek = 7 * 1440
    /// How far ahead curfews in different zones are joined: a whole year of DST changes and a week.
    static let crossZoneHorizon = Span.hours(24 * 7 * 53)

    /// The first run longer than `Schedule.maximumCurfewMinutes` that includes the schedule named
    /// `changed` (every run when nil), looking at enabled curfews only. Runs that do not include
    /// `changed` were accepted before and are not this change's fault, so they do not refuse it.
    public static func overrun(in schedules: [Schedule], involving changed: String? = nil, at now: Instant) -> Overrun? {
        let curfews = schedules.filter { $0.enabled && $0.kind.isCurfew }
        guard !curfews.isEmpty else { return nil }
        let strict = curfews.filter(\.kind.isStrict)
        // Each entry joins its own curfews and every strict curfew (which holds every name).
        var keys: [EntryID?] = [nil]
        keys += Set(curfews.filter { !$0.kind.isStrict }.flatMap(\.entries)).sorted().map { Optional($0) }
        for key in keys {
            let group = key.map { id in curfews.filter { $0.covers(id) } } ?? strict
            guard !group.isEmpty, changed.map({ name in group.contains { $0.name == name } }) ?? true else { continue }
            let runs = Set(group.map(\.timeZoneID)).count == 1 ? wallRuns(group) : realRuns(group, from: now)
            for run in runs where run.minutes > Schedule.maximumCurfewMinutes {
                guard changed.map({ run.schedules.contains($0) }) ?? true else { continue }
                return Overrun(entry: key, schedules: run.schedules, minutes: run.minutes)
            }
        }
        return nil
    }

    /// Throws `ScheduleError.curfewsJoinTooLong` for the first overrun `overrun` finds.
    public static func check(_ schedules: [Schedule], involving changed: String? = nil, at now: Instant) throws(ScheduleError) {
        if let o = overrun(in: schedules, involving: changed, at: now) {
            throw .curfewsJoinTooLong(entry: o.entry?.rawValue, schedules: o.schedules, minutes: o.minutes)
        }
    }

    struct Run: Equatable {
        var minutes: Int
        var schedules: [String]
    }

    /// Runs of covered minutes on the weekly wall clock of one zone, wrapping Saturday into Sunday.
    static func wallRuns(_ group: [Schedule]) -> [Run] {
        var owners = [[Int]](repeating: [], count: minutesPerWeek)
        for (index, s) in group.enumerated() {
            for day in 0..<7 where s.days.contains(.day(number: day)) {
                let first = day * 1440 + s.start.minuteOfDay
                for offset in 0..<s.lengthInMinutes { owners[(first + offset) % minutesPerWeek].append(index) }
            }
        }
        // Start right after an uncovered minute so no run is cut in two by the week's wrap.
        guard let gap = owners.firstIndex(where: \.isEmpty) else {
            return [Run(minutes: minutesPerWeek, schedules: group.map(\.name).sorted())]
        }
        var runs: [Run] = []
        var length = 0
        var names = Set<String>()
        for step in 1...minutesPerWeek {
            let here = owners[(gap + step) % minutesPerWeek]
            if here.isEmpty {
                if length > 0 { runs.append(Run(minutes: length, schedules: names.sorted())) }
                length = 0
                names = []
            } else {
                length += 1
                for i in here { names.insert(group[i].name) }
            }
        }
        return runs
    }

    /// Runs of real time over the coming year, for curfews in different zones.
    static func realRuns(_ group: [Schedule], from now: Instant) -> [Run] {
        var pieces: [(Occurrence, String)] = []
        for s in group {
            for o in s.occurrences(from: now, to: now + crossZoneHorizon) { pieces.append((o, s.name)) }
        }
        pieces.sort { $0.0.start < $1.0.start }
        var runs: [Run] = []
        var current: (start: Instant, end: Instant, names: Set<String>)?
        for (o, name) in pieces {
            if var c = current, o.start <= c.end {
                c.end = max(c.end, o.end)
                c.names.insert(name)
                current = c
            } else {
                if let c = current { runs.append(Run(minutes: Int((c.end - c.start).milliseconds / 60_000), schedules: c.names.sorted())) }
                current = (o.start, o.end, [name])
            }
        }
        if let c = current { runs.append(Run(minutes: Int((c.end - c.start).milliseconds / 60_000), schedules: c.names.sorted())) }
        return runs
    }
}
