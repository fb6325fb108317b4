import ControlAPI
import Engine
import Foundation
import HTTPTypes
import Hummingbird
import Logging
import ScrollOffCore
import ServiceKit

/// The control API's handlers, registered under the typed endpoints of `ControlEndpoints` on a
/// Hummingbird router (its trie matches the paths). On top of Hummingbird it answers 404 for an
/// unknown path, 405 (with `Allow`) for a known path and the wrong method, and 403 when the
/// authorizer refuses the caller, all in the JSON error shape of `ControlFailure`.
public struct ControlRouter: Sendable {
    public typealias Handler = @Sendable (ControlRequest) async throws -> ControlResponse

    private struct Route: Sendable {
        var method: ControlMethod
        var template: String
        var open: Bool
        var parameterName: String?
        /// What the route does to `?profile=` (SPEC §11 roles).
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

    /// Registers the handler of an endpoint that takes no body. `action` is what it does to the
    /// profile: by default a GET views and anything else edits, so a new route is for owners
    /// until it says otherwise.
    public mutating func add<Answer>(_ endpoint: ControlEndpoint<NoBody, Answer>, action: ProfileAction? = nil, handler: @escaping Handler) {
        routes.append(Route(method: endpoint.method, template: endpoint.template, open: endpoint.open,
                            parameterName: endpoint.parameterName, action: Self.action(action, endpoint.method), handler: handler))
    }

    /// Registers the handler of an endpoint with a body: the body is decoded strictly as the
    /// endpoint's `Body` (`ControlRequest.decodeBody`) after `admit` lets the caller in, so a
    /// check that needs no body (who may create profiles) answers before a malformed body does.
    public mutating func add<Body: ControlRequestBody, Answer>(
        _ endpoint: ControlEndpoint<Body, Answer>, action: ProfileAction? = nil,
        admit: (@Sendable (ControlRequest) throws(ControlFailure) -> Void)? = nil,
        handler: @escaping @Sendable (ControlRequest, Body) async throws -> ControlResponse
    ) {
        routes.append(Route(
            method: endpoint.method, template: endpoint.template, open: endpoint.open, parameterName: endpoint.parameterName,
            action: Self.action(action, endpoint.method)
        ) { request in
            try admit?(request)
            return try await handler(request, try request.decodeBody(Body.self))
        })
    }

    /// The action a route takes when it names none: a GET views, anything else edits.
    private static func action(_ named: ProfileAction?, _ method: ControlMethod) -> ProfileAction {
        named ?? (method == .get ? .view : .edit)
    }

    /// The Hummingbird responder of these routes.
    func responder() -> RouterResponder<ControlRequestContext> {
        let router = Router(context: ControlRequestContext.self)
        router.add(middleware: UnmatchedRouteMiddleware(known: routes.map { ($0.method, $0.template) }))
        for route in routes {
            let guarded = guardedHandler(route)
            router.on(RouterPath(route.template), method: HTTPRequest.Method(route.method.rawValue)!) { request, context in
                var control = ControlRequest(
                    method: request.method, target: request.uri.description, headers: request.headers,
                    body: context.body, caller: context.caller)
                if let name = route.parameterName, let value = context.parameters.get(name) {
                    control.parameters[name] = value.removingPercentEncoding ?? value
                }
                return try await guarded(control).response
            }
        }
        return router.buildResponder()
    }

    /// The route's handler behind the profile check, with every error in the JSON shape.
    private func guardedHandler(_ route: Route) -> Handler {
        let authorizer = authorizer
        let logger = logger
        let profileAccess = profileAccess
        return { request in
            if !route.open {
                let all = await profileAccess?() ?? ["default": ProfileAccess()]
                guard let access = all[request.profile] else {
                    throw ControlFailure(
                        status: .notFound, code: ControlErrorCode.profileNotFound,
                        message: "There is no profile '\(request.profile)'; profiles: \(all.keys.sorted().joined(separator: ", ")). "
                            + "`scrolloff profile add NAME --clients CIDR` makes one."
                    )
                }
                let decision = authorizer.decide(request.caller, profile: request.profile, access: access, action: route.action)
                if let failure = ControlFailure(decision) {
                    logger.notice("control request refused", metadata: [
                        "client.uid": "\(request.caller.uid)", "client.pid": "\(request.caller.pid)", "http.path": "\(request.path)",
                    ])
                    throw failure
                }
            }
            do {
                // SPEC §12: rule changes and refusals this request causes name its caller.
                return try await ChangeActor.$current.withValue(ChangeActor.describe(request.caller)) {
                    try await route.handler(request)
                }
            } catch let failure as ControlFailure {
                throw failure
            } catch {
                logger.error("control handler failed", metadata: ["http.path": "\(request.path)", "error": "\(error)"])
                throw ControlFailure.internalError("\(error)")
            }
        }
    }
}

/// Hummingbird answers a request no route matches with an empty 404; this turns that into the
/// API's JSON 404, or a 405 naming the allowed methods when the path is known (RFC 9110 §15.5.6).
struct UnmatchedRouteMiddleware: RouterMiddleware {
    typealias Context = ControlRequestContext
    let known: [(ControlMethod, String)]

    func handle(_ request: Request, context: Context, next: (Request, Context) async throws -> Response) async throws -> Response {
        do {
            return try await next(request, context)
        } catch let error as HTTPError where error.status == .notFound {
            let path = request.uri.path
            let pieces = path.split(separator: "/")
            let allowed = known.filter { _, template in
                let segments = template.split(separator: "/")
                return segments.count == pieces.count
                    && zip(segments, pieces).allSatisfy { segment, piece in segment.hasPrefix("{") || segment == piece }
            }.map(\.0.rawValue)
            if allowed.isEmpty { throw ControlFailure.notFound(path: path) }
            throw ControlFailure.methodNotAllowed(request.method.rawValue, path: path, allowed: allowed)
        }
    }
}

/// Who is asking and what they sent, for the handlers: the caller from SO_PEERCRED (read once
/// per connection) and the body, collected within the limit before routing.
public struct ControlRequestContext: RequestContext {
    public typealias Source = ControlRequestSource
    public var coreContext: CoreRequestContextStorage
    public var caller: CallerIdentity
    public var body: [UInt8]

    public init(source: ControlRequestSource) {
        coreContext = CoreRequestContextStorage(source: source)
        caller = source.caller
        body = source.body
    }
}

public struct ControlRequestSource: RequestContextSource {
    public var logger: Logger
    public var caller: CallerIdentity
    public var body: [UInt8]
}

extension ControlFailure: HTTPResponseError {
    public func response(from request: Request, context: some RequestContext) throws -> Response {
        ControlResponse.failure(self).response
    }
}

extension ControlResponse {
    /// The Hummingbird response: JSON with its length, or a stream Hummingbird sends chunked.
    var response: Response {
        switch self {
        case .json(let status, let body, let extra):
            var headers: HTTPFields = [.contentType: ControlMediaType.json]
            for (name, value) in extra {
                if let field = HTTPField.Name(name) { headers.append(HTTPField(name: field, value: value)) }
            }
            return Response(status: status, headers: headers, body: ResponseBody(byteBuffer: ByteBuffer(bytes: body)))
        case .stream(let status, let contentType, let producer):
            // Each piece goes out as it is written, so the client sees progress at once.
            let (pieces, continuation) = AsyncThrowingStream<ByteBuffer, any Error>.makeStream()
            let body = ResponseBody(asyncSequence: ControlStreamPieces(pieces: pieces, start: {
                Task {
                    do {
                        try await producer(ControlStreamWriter { data in continuation.yield(ByteBuffer(bytes: data)) })
                        continuation.finish()
                    } catch {
                        continuation.finish(throwing: error)
                    }
                }
            }))
            return Response(status: status, headers: [.contentType: contentType], body: body)
        case .body(let contentType, let extra, let body):
            var headers: HTTPFields = [.contentType: contentType]
            for (name, value) in extra {
                if let field = HTTPField.Name(name) { headers.append(HTTPField(name: field, value: value)) }
            }
            return Response(status: .ok, headers: headers, body: body)
        }
    }
}

/// The pieces of a streamed answer; the producer starts only once Hummingbird iterates, that is
/// once the head is on its way.
struct ControlStreamPieces: AsyncSequence, Sendable {
    typealias Element = ByteBuffer
    let pieces: AsyncThrowingStream<ByteBuffer, any Error>
    let start: @Sendable () -> Task<Void, Never>

    func makeAsyncIterator() -> AsyncThrowingStream<ByteBuffer, any Error>.AsyncIterator {
        _ = start()
        return pieces.makeAsyncIterator()
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
            error.rule = Refusal.Rule.role.wireName
        }
    }
}
