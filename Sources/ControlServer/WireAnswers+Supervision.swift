import ControlAPI
import Engine
import ScrollOffCore

// Pause (SPEC §5a) and daily allowances (SPEC §4a) on the wire, made from the engine's values.

extension PauseReport {
    package init(_ r: PauseReading) {
        self.init(profile: r.profile, pausedUntil: r.pause?.end, reason: r.pause?.reason, pausedBy: r.pause?.by, message: r.message, now: r.now)
    }

    /// The pause in force as `status` shows it.
    package init(_ p: Pause, profile: String, now: Instant) {
        self.init(profile: profile, pausedUntil: p.end, reason: p.reason, pausedBy: p.by,
                  message: "Paused: every name but the allow lists is blocked on \(profile)'s devices.", now: now)
    }
}

extension AllowanceInfo {
    package init(_ r: AllowanceReading) {
        self.init(entries: r.allowance.entries.map(\.rawValue), secondsByWeekday: r.allowance.secondsByWeekday, words: r.allowance.words,
                  todaySeconds: r.todaySeconds, allowanceLeftSeconds: r.leftTodaySeconds, lockedUntil: r.lockedUntil)
    }
}

extension AllowancesReport {
    package init(_ s: AllowanceSummary) {
        self.init(profile: s.profile, allowances: s.allowances.map(AllowanceInfo.init), message: s.message, now: s.now)
    }
}
