import ControlAPI
import Logging
import NIOHTTP1
import ScrollOffCore

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
        /// What the route does to `?profile=` (issue 13 roles).
        var action: ProfileAction
        var handler: Handler
    }

    private var routes: [Route] = []
    private let authorizer: any ControlAuthorizer
    private let logger: Logger
    /// Who each profile lists (`HelperEngine.profileAccess()`); nil = only `default` exists
    /// and it names no one (a control server without the engine, as in the list tests).
    private let profileAccess: (@Sendable () async -> [String: ProfileAccess])?

    public init(authorizer: any ControlAuthorizer, logger: Logger, profileAccess: (@Sendable () async -> [String: ProfileAccess])? = nil) {
        self.authorizer = authorizer
        self.logger = logger
        self.profileAccess = profileAccess
    }

    /// Adds a route; `pattern` is like `/v1/lists/{name}`. `action` is what it does to the
    /// profile: by default a GET views and anything else edits, so a new route is for owners
    /// until it says otherwise.
    public mutating func add(_ method: HTTPMethod, _ pattern: String, open: Bool = false, action: ProfileAction? = nil,
                             handler: @escaping Handler) {
        let segments = pattern.split(separator: "/").map { piece -> Segment in
            piece.hasPrefix("{") && piece.hasSuffix("}") ? .parameter(String(piece.dropFirst().dropLast())) : .literal(String(piece))
        }
        routes.append(Route(method: method, segments: segments, open: open, action: action ?? (method == .GET ? .view : .edit), handler: handler))
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
            let all = await profileAccess?() ?? ["default": ProfileAccess()]
            guard let access = all[request.profile] else {
                return .failure(ControlFailure(
                    status: .notFound, code: ControlErrorCode.profileNotFound,
                    message: "There is no profile '\(request.profile)'; profiles: \(all.keys.sorted().joined(separator: ", ")). "
                        + "`scrolloff profile add NAME --clients CIDR` makes one."
                ))
            }
            let decision = authorizer.decide(request.caller, profile: request.profile, access: access, action: route.action)
            if let failure = ControlFailure(decision) {
                logger.notice("control request refused", metadata: [
                    "client.uid": "\(request.caller.uid)", "client.pid": "\(request.caller.pid)", "http.path": "\(request.path)",
                ])
                return .failure(failure)
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

extension ControlFailure {
    /// The 403 for a refused decision; nil when it allows. A refusal by role carries rule `role`,
    /// as a rule's refusal carries its rule, so the CLI and the page can say which rule said no.
    init?(_ decision: AuthorizationDecision) {
        switch decision {
        case .allowed:
            return nil
        case .denied(let reason):
            self = .forbidden(reason)
        case .deniedByRole(let reason):
            self = .forbidden(reason)
            error.rule = Self.wireName(of: .role)
        }
    }
}
