import ControlAPI
import Foundation
import ListFetch
import Logging
import ScrollOffCore
import ServiceLifecycle

/// The control socket and the list refresh timer, built together for `HelperMain`.
///
/// Wiring (HelperMain):
/// ```swift
/// let control = try HelperControl(paths: paths, version: "0.1.0", clock: trustedClock, logger: logger)
/// await control.lists.onChange { snapshot in
///     await policy.setAlwaysAllowed(listHosts: snapshot.allowedHosts)   // SPEC §1
///     await blocklists.reload(snapshot.lists)                          // copies in force
/// }
/// services += control.services   // [ControlServer, ListRefreshService]
/// ```
public struct HelperControl: Sendable {
    public let lists: ListsController
    public let server: ControlServer
    public let refresh: ListRefreshService

    public var services: [any Service] { [server, refresh] }

    public init(
        paths: RuntimePaths, version: String, lists configuration: ListsConfiguration = ListsConfiguration(),
        clock: @escaping @Sendable () -> Instant, authorizer: any ControlAuthorizer = GroupMembershipAuthorizer(),
        logger: Logger
    ) {
        lists = ListsController(stateDirectory: paths.stateDirectory, configuration: configuration, clock: clock, logger: logger)
        let router = ControlRoutes.router(
            context: ControlContext(version: version, lists: lists, clock: clock), authorizer: authorizer, logger: logger
        )
        server = ControlServer(
            configuration: ControlServerConfiguration(socket: ControlSocketFile(path: paths.controlSocket)),
            router: router, logger: logger
        )
        refresh = ListRefreshService(lists: lists, timer: SystemRefreshTimer(clock: clock), logger: logger)
    }
}
