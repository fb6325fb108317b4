import ControlAPI
import Engine
import Foundation
import ListFetch
import Logging
import ScrollOffCore
import ServiceKit

/// Everything the control endpoints need from the rest of the helper.
public struct ControlContext: Sendable {
    public var version: String
    public var lists: ListsController
    /// The trusted clock (SPEC §11).
    public var clock: @Sendable () -> Instant
    public var startedAt: ContinuousClock.Instant
    /// The state engine behind the verb endpoints (EngineRoutes); nil serves health and lists only.
    public var engine: HelperEngine?
    /// The DNS side's facts for `GET /v1/doctor`.
    public var doctor: DoctorSources

    public init(
        version: String, lists: ListsController, clock: @escaping @Sendable () -> Instant, engine: HelperEngine? = nil,
        startedAt: ContinuousClock.Instant = .now, doctor: DoctorSources = DoctorSources()
    ) {
        self.version = version
        self.lists = lists
        self.clock = clock
        self.engine = engine
        self.startedAt = startedAt
        self.doctor = doctor
    }
}

/// The `/v1` endpoints. Build the router in one place so the API is readable as a table.
public enum ControlRoutes {
    public static func router(
        context: ControlContext, authorizer: any ControlAuthorizer = GroupMembershipAuthorizer(), logger: Logger
    ) -> ControlRouter {
        let engine = context.engine
        // With the engine, profiles, their owners and members come from its state (SPEC §9, §11).
        var access: (@Sendable () async -> [String: ProfileAccess])?
        if let engine { access = { await engine.profileAccess() } }
        var router = ControlRouter(authorizer: authorizer, logger: logger, profileAccess: access)
        // Health answers anyone who can reach the socket: `doctor` and monitoring need it, and it
        // tells nothing private.
        router.add(ControlEndpoints.health) { request in health(request, context) }
        router.add(ControlEndpoints.lists) { _ in .ok(try await context.lists.listsResponse()) }
        router.add(ControlEndpoints.addList) { request, body in try await ListsHandlers.add(request, body, caller: request.caller, context) }
        router.add(ControlEndpoints.updateLists) { request, body in try await ListsHandlers.update(request, body, context) }
        let profiles = access
        router.add(ControlEndpoints.removeList) { request in
            let name = request.parameters[ControlPath.name] ?? ""
            // Lists are the household's, but the router checked only the profile the request
            // names: a member of an ownerless profile could otherwise remove a list another
            // profile blocks, and open its names there.
            var checked: Set<String>?
            if let engine, let profiles {
                checked = try await ListRemovalAccess.check(request, list: name, engine: engine, access: profiles, authorizer: authorizer)
            }
            return .ok(try await context.lists.remove(name, checkedProfiles: checked))
        }
        if let engine {
            EngineRoutes.add(to: &router, engine: engine, authorizer: authorizer)
            HouseholdRoutes.add(to: &router, engine: engine, authorizer: authorizer)
            InsightsRoutes.add(to: &router, engine: engine)
            SupervisionRoutes.add(to: &router, engine: engine)
            // `scrolloff doctor` (SPEC §11): any member of the group, for a profile they may use.
            router.add(ControlEndpoints.doctor) { request in try await DoctorRoute.facts(request, context, engine: engine) }
        }
        return router
    }

    static func health(_ request: ControlRequest, _ context: ControlContext) -> ControlResponse {
        let uptime = ContinuousClock.now - context.startedAt
        return .ok(HealthResponse(
            version: context.version, pid: getpid(), uptimeSeconds: uptime.components.seconds,
            now: context.clock().date, caller: request.caller
        ))
    }
}

/// The list endpoints. Adding and updating download lists, which can take minutes for a large
/// list, so both stream progress as ndjson when the client asks for `application/x-ndjson`.
enum ListsHandlers {
    static func add(_ request: ControlRequest, _ body: AddListRequest, caller: CallerIdentity, _ context: ControlContext) async throws -> ControlResponse {
        // Validate before streaming, so a bad URL or name is a plain 400 rather than an error line.
        _ = try ListSourceNaming.validate(body.url)
        // The caller's rights decide which sources they may add.
        guard request.acceptsNDJSON else { return .created(try await context.lists.add(body, caller: caller)) }
        // Streamed: the download's progress, and each failed attempt that will be tried again with
        // why and when, so a person is never left waiting in silence.
        // The stream runs after this handler returns, outside the router's task-local: the event
        // log must still name who added the list (SPEC §12).
        let actor = ChangeActor.current
        return .stream(status: .ok, contentType: ControlMediaType.ndjson) { writer in
            let (lines, continuation) = AsyncStream.makeStream(of: UpdateStreamLine.self, bufferingPolicy: .bufferingNewest(256))
            let work = Task {
                do {
                    let added = try await ChangeActor.$current.withValue(actor) { try await context.lists.add(body, caller: caller) { progress in
                        if let failed = progress.failed, let wait = progress.retryIn {
                            continuation.yield(UpdateStreamLine(event: UpdateStreamLine.retry, name: body.name, attempt: progress.attempt,
                                                                message: failed.problem, retryInSeconds: wait.wholeSeconds))
                        } else {
                            continuation.yield(UpdateStreamLine(event: UpdateStreamLine.progress, name: body.name,
                                                                receivedBytes: progress.receivedBytes, expectedBytes: progress.expectedBytes))
                        }
                    } }
                    continuation.yield(UpdateStreamLine(event: UpdateStreamLine.resultEvent, result: added.result))
                    continuation.yield(UpdateStreamLine(event: UpdateStreamLine.done, now: added.now))
                } catch let failure as ControlFailure {
                    // With the status a plain answer would have had, so the CLI exits as it would.
                    continuation.yield(UpdateStreamLine(event: UpdateStreamLine.errorEvent, error: failure.error, status: Int(failure.status.code)))
                } catch {
                    continuation.yield(UpdateStreamLine(event: UpdateStreamLine.errorEvent, error: ControlFailure.internalError("\(error)").error))
                }
                continuation.finish()
            }
            _ = work
            for await line in lines { try await writer.writeLine(line) }
        }
    }

    static func update(_ request: ControlRequest, _ body: UpdateListsRequest, _ context: ControlContext) async throws -> ControlResponse {
        // An unknown name is a 404 before any stream starts.
        _ = try await context.lists.sources(named: body.name)
        guard request.acceptsNDJSON else {
            let results = try await context.lists.update(name: body.name)
            return .ok(UpdateListsResponse(now: context.clock().date, results: results))
        }
        return .stream(status: .ok, contentType: ControlMediaType.ndjson) { writer in
            let (lines, continuation) = AsyncStream.makeStream(of: UpdateStreamLine.self, bufferingPolicy: .bufferingNewest(256))
            // The refresh runs on its own task: a client that hangs up mid-download stops seeing
            // progress but does not cancel the refresh it asked for.
            let work = Task {
                do {
                    let results = try await context.lists.update(name: body.name) { name, progress in
                        continuation.yield(UpdateStreamLine(
                            event: UpdateStreamLine.progress, name: name.rawValue,
                            receivedBytes: progress.receivedBytes, expectedBytes: progress.expectedBytes
                        ))
                    }
                    for result in results { continuation.yield(UpdateStreamLine(event: UpdateStreamLine.resultEvent, result: result)) }
                    continuation.yield(UpdateStreamLine(
                        event: UpdateStreamLine.done, now: context.clock().date,
                        updated: results.count { $0.outcome == RefreshOutcome.updated },
                        unchanged: results.count { $0.outcome == RefreshOutcome.unchanged },
                        failed: results.count { $0.outcome == RefreshOutcome.failed }
                    ))
                } catch let failure as ControlFailure {
                    continuation.yield(UpdateStreamLine(event: UpdateStreamLine.errorEvent, error: failure.error))
                } catch {
                    continuation.yield(UpdateStreamLine(event: UpdateStreamLine.errorEvent, error: ControlFailure.internalError("\(error)").error))
                }
                continuation.finish()
            }
            _ = work
            for await line in lines { try await writer.writeLine(line) }
        }
    }
}
