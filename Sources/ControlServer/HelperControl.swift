import ControlAPI
import DomainLists
import Enforcement
import Engine
import Foundation
import ListFetch
import Logging
import LowPriority
import ScrollOffCore
import ServiceKit
import ServiceLifecycle

/// The control socket and the list refresh timer over the state engine, built together for
/// `HelperMain`.
///
/// Wiring (HelperMain):
/// ```swift
/// let engine = try await HelperEngine.start(configuration: configuration, timeSource: SystemTimeSource())
/// let control = await HelperControl(paths: paths, version: "0.1.0", engine: engine, logger: logger)
/// services += [engine] + control.services   // [ControlServer, ListRefreshService]
/// ```
///
/// There is one list system: the `ListsController` downloads, validates and keeps the copies
/// (files and metadata under the state directory) and refreshes them. After each of its changes
/// the copies are parsed once, off both actors (`HelperEngine.parseLists`), and put in force with
/// `HelperEngine.setLists`, together with every configured list's name (an entry, never a custom
/// domain) and the hosts of the list URLs, which stay allowed (SPEC §1).
public struct HelperControl: Sendable {
    public let engine: HelperEngine
    public let lists: ListsController
    public let server: ControlServer
    public let refresh: ListRefreshService
    /// `[notify] command` for new requests for time (`NotifyHookService`).
    public let notifyHook: NotifyHookService

    public var services: [any Service] { [server, refresh, notifyHook] }

    /// Builds the pieces and puts the lists already on disk in force before returning.
    public init(
        paths: RuntimePaths, version: String, engine: HelperEngine, lists configuration: ListsConfiguration = ListsConfiguration(),
        authorizer: any ControlAuthorizer = GroupMembershipAuthorizer(), socketMode: mode_t = 0o660,
        clock: (@Sendable () -> Instant)? = nil, doctor: DoctorSources = DoctorSources(),
        controlLimits: ControlConnectionLimits = ControlConnectionLimits(), logger: Logger
    ) async {
        self.engine = engine
        // The engine's trusted clock (SPEC §11), read from the published enforcement without an
        // actor hop; tests that move the engine's time source pass their own.
        let clock: @Sendable () -> Instant = clock ?? { engine.box.enforcement.now() }
        lists = ListsController(stateDirectory: paths.stateDirectory, configuration: configuration, clock: clock, logger: logger)
        let router = ControlRoutes.router(
            context: ControlContext(version: version, lists: lists, clock: clock, engine: engine, doctor: doctor), authorizer: authorizer, logger: logger
        )
        server = ControlServer(
            configuration: ControlServerConfiguration(
                socket: ControlSocketFile(path: paths.controlSocket, mode: socketMode), limits: controlLimits),
            router: router, logger: logger
        )
        refresh = ListRefreshService(lists: lists, timer: SystemRefreshTimer(clock: clock), logger: logger)
        notifyHook = NotifyHookService(engine: engine)
        await lists.setGuard(.rules(of: engine))
        // Another helper added or removed a list: the refresh service follows at once.
        let listChanges = lists.changes
        await engine.setListSourcesHandler { listChanges.notify() }
        let budget = configuration.badLineBudget
        let parsedCopies = lists.parsedCopies
        await lists.onChange { snapshot in
            await Self.apply(snapshot, to: engine, budget: budget, parsedCopies: parsedCopies, logger: logger)
        }
        await lists.publish()
    }

    /// Parses the copies in force and hands them to the engine. A copy that no longer parses
    /// within its budget (it passed validation when stored, so the file changed under us) is
    /// logged; an in-memory list (tests) keeps its previous rules, a stored copy blocks nothing
    /// until a good one arrives, since the engine keeps no second copy of its rules. `budget` is the one the store validated with.
    static func apply(
        _ snapshot: ListsSnapshot, to engine: HelperEngine, budget: BadLineBudget, parsedCopies: ParsedCopies? = nil, logger: Logger
    ) async {
        var files: [String: String] = [:]
        var held: [String: String] = [:]
        for list in snapshot.lists {
            if let path = list.copyPath { files[list.name] = path }
            if let path = list.heldPath { held[list.name] = path }
        }
        // Parsing a large list takes a while: not on the lists actor, not on the engine, and no
        // thread of Swift's pool waits for it. A refresh's parse runs under SCHED_IDLE, anything
        // else at nice 10 (`LowPriorityWork` reads this task's `ListRefreshContext`).
        let (copyFiles, heldFiles) = (files, held)
        let (lists, copies, failures) = await LowPriorityWork.perform {
            HelperEngine.parseLists(files: copyFiles, held: heldFiles, budget: budget, reusing: parsedCopies)
        }
        for (name, failure) in failures.sorted(by: { $0.key < $1.key }) {
            // The engine keeps lists as their files (SPEC §9), so the rules in force now go at
            // the rebuild this causes; before, a packed copy of the previous rules stayed.
            logger.warning("a stored list copy did not parse; it blocks nothing until a good copy is downloaded (scrolloff lists update NAME)",
                           metadata: ["list.name": "\(name)", "error": "\(failure)"])
        }
        // The parsed lists are handed over, not kept here too: their matcher build frees them as it
        // reads them (`setLists`, SPEC §9: memory per name).
        await engine.setLists(consume lists, names: snapshot.lists.map(\.name), hosts: snapshot.allowedHosts,
                              keeping: Set(failures.keys), copies: copies, order: snapshot.sequence)
    }
}
