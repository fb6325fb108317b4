import Hummingbird
import ServiceKit

/// The page reads `chunked` request bodies and no other transfer coding (`TransferCoding`, RFC 9112
/// §6), as the control socket does: anything else is refused before a handler reads the body,
/// instead of reaching the form reader as a parser error that came out as a 500.
struct WebTransferCodingMiddleware: RouterMiddleware {
    typealias Context = WebContext
    let web: HouseholdWeb

    func handle(_ request: Request, context: WebContext, next: (Request, WebContext) async throws -> Response) async throws -> Response {
        guard let refusal = TransferCoding.refusal(request.headers) else { return try await next(request, context) }
        var response = await web.render(WebFailure(refusal.status, refusal.message), request)
        // Where the body ends cannot be known, so nothing after it can be read as a request.
        response.headers[.connection] = "close"
        return response
    }
}
