import ControlAPI
import Engine
import ScrollOffCore
import ServiceKit

/// Pause (SPEC §5a) and daily allowances (SPEC §4a): an owner's tools over someone else's devices
/// (`ProfileAction.supervise`: owners and root; a member is refused with whom to ask).
///
/// | Verb | Endpoint |
/// |---|---|
/// | pause DURATION \| --until HH:MM [--reason] | POST /v1/pause |
/// | resume | POST /v1/resume |
/// | allowance list | GET /v1/allowances |
/// | allowance set DURATION [--entries] [--days] | POST /v1/allowances |
/// | allowance clear [--entries] [--days] | POST /v1/allowances/clear |
enum SupervisionRoutes {
    static func add(to router: inout ControlRouter, engine: HelperEngine) {
        router.add(ControlEndpoints.pause, action: .supervise) { r, body in
            return try await engineAnswer(engine, .created) { () async throws(EngineError) in
                let until = try body.until.map { (text: String) throws(EngineError) -> LocalTime in
                    do throws(ScheduleError) { return try LocalTime.parse(text) } catch { throw .invalid("until: \(error.message)") }
                }
                return PauseReport(try await engine.pause(profile: r.profile, for: body.seconds.map { .seconds($0.seconds) }, until: until,
                                                          reason: body.reason))
            }
        }
        router.add(ControlEndpoints.resume, action: .supervise) { r in
            try await engineAnswer(engine) { () async throws(EngineError) in PauseReport(try await engine.resume(profile: r.profile)) }
        }
        router.add(ControlEndpoints.allowances) { r in
            try await engineAnswer(engine) { () async throws(EngineError) in AllowancesReport(try await engine.allowances(profile: r.profile)) }
        }
        router.add(ControlEndpoints.setAllowance, action: .supervise) { r, body in
            return try await engineAnswer(engine) { () async throws(EngineError) in
                let days = try Self.days(body.days) ?? .daily
                return AllowancesReport(try await engine.setAllowance(seconds: body.seconds.seconds, entries: body.entries, days: days, profile: r.profile))
            }
        }
        router.add(ControlEndpoints.clearAllowance, action: .supervise) { r, body in
            return try await engineAnswer(engine) { () async throws(EngineError) in
                AllowancesReport(try await engine.clearAllowance(entries: body.entries, days: try Self.days(body.days), profile: r.profile))
            }
        }
    }

    static func days(_ text: String?) throws(EngineError) -> Weekdays? {
        guard let text else { return nil }
        do throws(ScheduleError) { return try Weekdays.parse(text) } catch { throw .invalid("days: \(error.message)") }
    }
}
