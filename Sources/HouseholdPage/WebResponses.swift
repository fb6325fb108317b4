import Foundation
import HTTPTypes
import Hummingbird

/// How every answer of the household page is sent: HTML that no cache keeps, in no frame, with
/// scripts only from the page itself.
enum WebResponses {
    static func html(_ status: HTTPResponse.Status, _ body: String, cookie: String? = nil, extra: HTTPFields = [:]) -> Response {
        var headers = securityHeaders
        headers[.contentType] = "text/html; charset=utf-8"
        if let cookie { headers[.setCookie] = cookie }
        headers.append(contentsOf: extra)
        return Response(status: status, headers: headers, body: .init(byteBuffer: ByteBuffer(string: body)))
    }

    /// POST-redirect-GET: a reload never sends a form twice.
    static func redirect(_ location: String, cookie: String? = nil) -> Response {
        var headers = securityHeaders
        headers[.location] = location
        if let cookie { headers[.setCookie] = cookie }
        return Response(status: .seeOther, headers: headers)
    }

    /// The session cookie: HttpOnly (no script reads it), SameSite=Strict (no other site's page
    /// sends it), no Secure flag because the page is plain HTTP on a LAN (README says so).
    static func sessionCookie(_ id: String) -> String {
        "\(WebSessions.cookieName)=\(id); Path=/; HttpOnly; SameSite=Strict"
    }

    static let securityHeaders: HTTPFields = [
        .cacheControl: "no-store",
        .contentSecurityPolicy: "default-src 'none'; style-src 'unsafe-inline'; script-src 'self' 'unsafe-inline'; connect-src 'self'; img-src 'self'; form-action 'self'; frame-ancestors 'none'; base-uri 'none'",
        HTTPField.Name("X-Content-Type-Options")!: "nosniff",
        HTTPField.Name("Referrer-Policy")!: "no-referrer",
        HTTPField.Name("X-Frame-Options")!: "DENY",
    ]
}
