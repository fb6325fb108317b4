import ControlAPI
import Enforcement
import Engine
import Foundation
import ScrollOffCore
import ServiceKit

/// The `/v1` verb endpoints over `HelperEngine` (SPEC §13), one per CLI verb, registered under the
/// route table `ControlEndpoints` (the paths below are for reading; the table is the one source). Every one acts on
/// `?profile=` (default `default`), which the router has already checked the caller may use
/// (SPEC §11). Bodies are strict JSON (`ControlRequestBody`); answers are the wire types of
/// `ControlAPI`.
///
/// | Verb | Endpoint |
/// |---|---|
/// | status | GET /v1/status |
/// | services [--category C] | GET /v1/services?category=C |
/// | block / unblock | POST /v1/block, POST /v1/unblock |
/// | schedule add / list / rm | POST /v1/schedules, GET /v1/schedules, DELETE /v1/schedules/{name} |
/// | focus | POST /v1/focus |
/// | wallet | GET /v1/wallet |
/// | use / stop / peek / token | POST /v1/use, /v1/stop, /v1/peek, /v1/token |
/// | (exercise offer) | GET /v1/bypass/next |
/// | (exercise outcome) | POST /v1/exercises |
/// | plan add / list / archive | POST /v1/plans, GET /v1/plans[?archived=true], POST /v1/plans/{id}/archive |
/// | alternatives add / list | POST /v1/alternatives, GET /v1/alternatives |
/// | stats | GET /v1/stats?period=day|week|month|year |
/// | events | GET /v1/events[?since=RFC3339] |
/// | export --csv | GET /v1/export (text/csv), the profiles the caller may view |
/// | profile add (root only) / list | POST /v1/profiles, GET /v1/profiles (the profiles the caller may view) |
///
/// What each does to the profile (`ProfileAction`, SPEC §11): GETs view; use, peek, token, stop,
/// exercises, plans, alternatives and focus (which only tightens) spend, so members may; block,
/// unblock and schedules edit, for owners only.
enum EngineRoutes {
    static func add(to router: inout ControlRouter, engine: HelperEngine, authorizer: any ControlAuthorizer) {
        router.add(ControlEndpoints.status) { r in try await engineAnswer(engine) { () async throws(EngineError) in StatusReport(try await engine.status(profile: r.profile)) } }
        router.add(ControlEndpoints.services) { r in
            try await engineAnswer(engine) { () async throws(EngineError) in
                ServicesResponse(services: try await engine.services(category: r.query.nonEmpty(ControlQuery.category), profile: r.profile).map(ServiceReport.init))
            }
        }
        router.add(ControlEndpoints.block) { r, body in
            return try await engineAnswer(engine) { () async throws(EngineError) in BlockResult(try await engine.block(body.entries, reason: body.reason, profile: r.profile)) }
        }
        router.add(ControlEndpoints.unblock) { r, body in
            return try await engineAnswer(engine) { () async throws(EngineError) in BlockResult(try await engine.unblock(body.entries, profile: r.profile)) }
        }
        addSchedules(to: &router, engine: engine)
        addCredit(to: &router, engine: engine)
        addInsights(to: &router, engine: engine, authorizer: authorizer)
        EventLogRoutes.add(to: &router, engine: engine, authorizer: authorizer)
        // The profiles the caller may view, with their clients: a member does not learn the other
        // profiles' devices; root and the helper's user see them all.
        router.add(ControlEndpoints.profiles) { r in
            let visible = await ViewableProfiles.of(r.caller, engine: engine, authorizer: authorizer)
            var answer = await profiles(engine)
            answer.profiles.removeAll { !visible.contains($0.name) }
            // Overlaps among the profiles the caller may view only: they name networks too.
            let overlaps = ClientOverlaps.describe(answer.profiles.map { (name: $0.name, clients: $0.clients) })
            answer.overlaps = overlaps.isEmpty ? nil : overlaps
            return .ok(answer)
        }
        // Creating a profile or moving clients between profiles decides which rules a device
        // follows, so it is the administrator's call, not a group member's (SPEC §9, §11).
        router.add(ControlEndpoints.addProfile, admit: { r throws(ControlFailure) in
            if case .denied(let reason) = authorizer.mayManageProfiles(r.caller) { throw .forbidden(reason) }
        }) { r, body in
            _ = try await engineAnswer(engine, .created) { () async throws(EngineError) in try await engine.addProfile(body.name, clients: body.clients) }
            return .created(await profiles(engine))
        }
    }

    static func profiles(_ engine: HelperEngine) async -> ProfilesResponse {
        let list = await engine.profileList()
        let overlaps = ClientOverlaps.describe(list)
        return ProfilesResponse(profiles: list.map { ProfileInfo(name: $0.name, clients: $0.clients) }, overlaps: overlaps.isEmpty ? nil : overlaps)
    }

    static func addSchedules(to router: inout ControlRouter, engine: HelperEngine) {
        router.add(ControlEndpoints.addSchedule) { r, body in
            return try await engineAnswer(engine, .created) { () async throws(EngineError) in ScheduleReport(try await engine.addSchedule(body, profile: r.profile)) }
        }
        router.add(ControlEndpoints.schedules) { r in
            try await engineAnswer(engine) { () async throws(EngineError) in SchedulesResponse(schedules: try await engine.schedules(profile: r.profile).map(ScheduleReport.init), now: engine.box.enforcement.now()) }
        }
        router.add(ControlEndpoints.removeSchedule) { r in
            let name = r.parameters[ControlPath.name] ?? ""
            return try await engineAnswer(engine) { () async throws(EngineError) in
                try await engine.removeSchedule(name, profile: r.profile)
                return DoneResponse(message: "Removed the schedule “\(name)”.")
            }
        }
        router.add(ControlEndpoints.focus, action: .spend) { r, body in
            return try await engineAnswer(engine, .created) { () async throws(EngineError) in
                FocusReport(try await engine.focus(length: body.seconds.span, entries: body.entries, reason: body.reason, profile: r.profile))
            }
        }
    }

    static func addCredit(to router: inout ControlRouter, engine: HelperEngine) {
        router.add(ControlEndpoints.wallet) { r in try await engineAnswer(engine) { () async throws(EngineError) in WalletReport(try await engine.wallet(profile: r.profile)) } }
        router.add(ControlEndpoints.use, action: .spend) { r, body in
            let entry = try required(body.entry)
            return try await engineAnswer(engine, .created) { () async throws(EngineError) in
                try await GrantResult(engine.use(entry, for: body.forSeconds?.span, task: body.task, profile: r.profile))
            }
        }
        router.add(ControlEndpoints.peek, action: .spend) { r, body in
            let entry = try required(body.entry)
            return try await engineAnswer(engine, .created) { () async throws(EngineError) in try await GrantResult(engine.peek(entry, task: body.task, profile: r.profile)) }
        }
        router.add(ControlEndpoints.token, action: .spend) { r, body in
            let entry = try required(body.entry)
            return try await engineAnswer(engine, .created) { () async throws(EngineError) in try await GrantResult(engine.token(entry, task: body.task, profile: r.profile)) }
        }
        router.add(ControlEndpoints.stop, action: .spend) { r, body in
            return try await engineAnswer(engine) { () async throws(EngineError) in try await StopResult(engine.stop(body.entry, profile: r.profile)) }
        }
        router.add(ControlEndpoints.bypassPreview) { r in
            let entry = r.query.nonEmpty(ControlQuery.entry)
            return try await engineAnswer(engine) { () async throws(EngineError) in try await BypassPreview(engine.bypassPreview(profile: r.profile, entry: entry)) }
        }
        router.add(ControlEndpoints.recordExercise, action: .spend) { r, body in
            guard let outcome = ExerciseRecord.Outcome(rawValue: body.outcome) else {
                throw ControlFailure.invalidArgument("“\(body.outcome)” is not an outcome; use \(ExerciseRecord.Outcome.allCases.map(\.rawValue).joined(separator: ", ")).")
            }
            return try await engineAnswer(engine, .created) { () async throws(EngineError) in
                try await engine.recordExercise(body.exercise, entry: body.entry, outcome: outcome, profile: r.profile)
                return DoneResponse(message: "Recorded.")
            }
        }
    }

    static func addInsights(to router: inout ControlRouter, engine: HelperEngine, authorizer: any ControlAuthorizer) {
        router.add(ControlEndpoints.addPlan, action: .spend) { r, body in
            return try await engineAnswer(engine, .created) { () async throws(EngineError) in try await PlanReport(engine.addPlan(when: body.when, then: body.then, profile: r.profile)) }
        }
        router.add(ControlEndpoints.plans) { r in
            let archived = r.query.flag(ControlQuery.archived)
            return try await engineAnswer(engine) { () async throws(EngineError) in
                PlansResponse(plans: await engine.planList(includeArchived: archived, profile: r.profile).map(PlanReport.init))
            }
        }
        router.add(ControlEndpoints.archivePlan, action: .spend) { r in
            let id: Int64
            do throws(WireRangeError) { id = try WireID.parse(r.parameters[ControlPath.id], what: "a plan id", listing: "`scrolloff plan list`") } catch {
                throw ControlFailure(error)
            }
            return try await engineAnswer(engine) { () async throws(EngineError) in
                try await engine.archivePlan(id, profile: r.profile)
                return DoneResponse(message: "Archived plan \(id). It stays in your history and is no longer shown.")
            }
        }
        router.add(ControlEndpoints.addAlternative, action: .spend) { r, body in
            return try await engineAnswer(engine, .created) { () async throws(EngineError) in
                try await AlternativeReport(engine.addAlternative(body.text, profile: r.profile))
            }
        }
        router.add(ControlEndpoints.alternatives) { r in
            try await engineAnswer(engine) { () async throws(EngineError) in AlternativesResponse(alternatives: await engine.alternativeList(profile: r.profile).map(AlternativeReport.init)) }
        }
        router.add(ControlEndpoints.stats) { r in
            let word = r.query[ControlQuery.period] ?? StatsPeriod.day.rawValue
            guard let period = StatsPeriod(rawValue: word) else {
                throw ControlFailure.invalidArgument("“\(word)” is not a period; use day, week, month or year.")
            }
            return try await engineAnswer(engine) { () async throws(EngineError) in try await engine.stats(period, profile: r.profile) }
        }
        router.add(ControlEndpoints.events) { r in
            let since: Instant?
            do throws(WireRangeError) { since = try WireTimeQuery.parse(r.query[ControlQuery.since], field: ControlQuery.since.name) } catch {
                throw ControlFailure(error)
            }
            // The engine's trusted now, the clock the events were written on (SPEC §11). The
            // enforcement's clock reads the machine's boot clock, which under a test's time source
            // is another clock: after 12 h of uptime "until 14:00" read "until Wed 14:00".
            return try await engineAnswer(engine) { () async throws(EngineError) in
                let events = try await engine.events(since: since, profile: r.profile)
                return EventsResponse(events: events.map(EventReport.init), now: await engine.trustedNow())
            }
        }
        // Every profile the caller may view, not only `?profile=` (SPEC §11: a member's export
        // holds their own profile's rows, never another's).
        router.add(ControlEndpoints.export) { r in
            let profiles = await ViewableProfiles.of(r.caller, engine: engine, authorizer: authorizer)
            let csv: String
            do throws(EngineError) { csv = try await engine.exportCSV(profiles: profiles) } catch { throw ControlFailure(error) }
            // The export can be large; it goes out as one chunked text/csv body (SPEC §12).
            return .stream(status: .ok, contentType: "text/csv; charset=utf-8") { writer in
                try await writer.writeBytes(Data(csv.utf8))
            }
        }
    }

    static func required(_ entry: String?) throws(ControlFailure) -> String {
        guard let entry, !entry.trimmingCharacters(in: .whitespaces).isEmpty else {
            throw .invalidArgument("Name the entry, such as “instagram”.")
        }
        return entry
    }
}
