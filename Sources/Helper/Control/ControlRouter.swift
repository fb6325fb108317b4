import ControlAPI
import Logging
import NIOHTTP1

/// Maps `METHOD /v1/path/{param}` to handlers; answers 404 for an unknown path, 405 (with
/// `Allow`) for a known path and the wrong method, and 403 when the authorizer refuses the caller.
public struct ControlRouter: Sendable {
    public typealias Handler = @Sendable (ControlRequest) async throws -> ControlResponse

    private enum Segment: Sendable, Equatable {
        case literal(String)
        case parameter(String)
    }

    private struct Route: Sendable {
        var method: HTTPMethod
        var segments: [Segment]
        /// Open routes (health) answer anyone who can reach the socket.
        var open: Bool
        var handler: Handler
    }

    private var routes: [Route] = []
    private let authorizer: any ControlAuthorizer
    private let logger: Logger
    /// Which uids own which profile (`HelperEngine.profileOwners()`); nil = only `default` exists
    /// and it names no owner (a control server without the engine, as in the list tests).
    private let profileOwners: (@Sendable () async -> [String: [UInt32]])?

    public init(authorizer: any ControlAuthorizer, logger: Logger, profileOwners: (@Sendable () async -> [String: [UInt32]])? = nil) {
        self.authorizer = authorizer
        self.logger = logger
        self.profileOwners = profileOwners
    }

    /// Adds a route; `pattern` is like `/v1/lists/{name}`.
    public mutating func add(_ method: HTTPMethod, _ pattern: String, open: Bool = false, handler: @escaping Handler) {
        let segments = pattern.split(separator: "/").map { piece -> Segment in
            piece.hasPrefix("{") && piece.hasSuffix("}") ? .parameter(String(piece.dropFirst().dropLast())) : .literal(String(piece))
        }
        routes.append(Route(method: method, segments: segments, open: open, handler: handler))
    }

    public func respond(to request: ControlRequest) async -> ControlResponse {
        var request = request
        let pieces = request.path.split(separator: "/", omittingEmptySubsequences: true).map { String($0) }
        var candidates: [(Route, [String: String])] = []
        for route in routes {
            if let parameters = match(route.segments, pieces) { candidates.append((route, parameters)) }
        }
        guard !candidates.isEmpty else { return .failure(.notFound(path: request.path)) }
        guard let (route, parameters) = candidates.first(where: { $0.0.method == request.method }) else {
            let allowed = candidates.map { "\($0.0.method)" }
            return .failure(.methodNotAllowed("\(request.method)", path: request.path, allowed: allowed))
        }
        request.parameters = parameters
        if !route.open {
            let owners = await profileOwners?() ?? ["default": []]
            guard let profileOwners = owners[request.profile] else {
                return .failure(ControlFailure(
                    status: .notFound, code: ControlErrorCode.profileNotFound,
                    message: "There is no profile '\(request.profile)'; profiles: \(owners.keys.sorted().joined(separator: ", ")). "
                        + "`scrolloff profile add NAME --clients CIDR` makes one."
                ))
            }
            if case .denied(let reason) = authorizer.decide(request.caller, profile: request.profile, owners: profileOwners) {
                logger.notice("control request refused", metadata: [
                    "client.uid": "\(request.caller.uid)", "client.pid": "\(request.caller.pid)", "http.path": "\(request.path)",
                ])
                return .failure(.forbidden(reason))
            }
        }
        do {
            return try await route.handler(request)
        } catch let failure as ControlFailure {
            return .failure(failure)
        } catch {
            logger.error("control handler failed", metadata: ["http.path": "\(request.path)", "error": "\(error)"])
            return .failure(.internalError("\(error)"))
        }
    }

    private func match(_ segments: [Segment], _ pieces: [String]) -> [String: String]? {
        guard segments.count == pieces.count else { return nil }
        var parameters: [String: String] = [:]
        for (segment, piece) in zip(segments, pieces) {
            switch segment {
            case .literal(let text):
                guard text == piece else { return nil }
            case .parameter(let name):
                parameters[name] = piece.removingPercentEncoding ?? piece
            }
        }
        return parameters
    }
}
