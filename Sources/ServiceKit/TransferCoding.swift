import Foundation
import HTTPTypes

/// What the control socket and the household page do with a request's `Transfer-Encoding`
/// (RFC 9112 §6): they read `chunked` bodies and nothing else. A request whose codings are not
/// exactly `chunked` is refused before its body is read, with the connection closed after the
/// answer, since the server cannot know where such a body ends:
/// - chunked not the final coding (`xchunked`, `identity`, `chunked, gzip`): 400 (§6.3: "the server
///   MUST respond with the 400 (Bad Request) status code and then close the connection");
/// - chunked last, after a coding the server does not implement (`gzip, chunked`): 501 (§6.1).
///
/// Before this, `xchunked` reached the body reader as a parser error and came out as a 500 (or a
/// connection closed without an answer), and `gzip, chunked` was read as if the gzip were not there.
package enum TransferCoding {
    package struct Refusal: Sendable, Equatable {
        package var status: HTTPResponse.Status
        package var message: String
    }

    /// nil when the request has no `Transfer-Encoding` or only `chunked`.
    package static func refusal(_ headers: HTTPFields) -> Refusal? {
        let lines = headers[values: .transferEncoding]
        guard !lines.isEmpty else { return nil }
        // A coding's parameters (`;q=…`) are part of its name here: no coding this server reads has any.
        let codings = lines.flatMap { $0.split(separator: ",") }
            .map { $0.trimmingCharacters(in: .whitespaces).lowercased() }
            .filter { !$0.isEmpty }
        let said = lines.joined(separator: ", ")
        if codings == ["chunked"] { return nil }
        guard codings.last == "chunked", codings.dropLast().allSatisfy({ $0 != "chunked" }) else {
            return Refusal(status: .badRequest, message: "Transfer-Encoding “\(said.prefix(100))” does not end in chunked (once), so the body's length "
                + "cannot be known (RFC 9112 §6.3). Send the body with a Content-Length, or chunked alone.")
        }
        return Refusal(status: .notImplemented, message: "Transfer-Encoding “\(said.prefix(100))” names a coding this server does not implement "
            + "(RFC 9112 §6.1); it reads chunked alone. Send the body with a Content-Length, or chunked alone.")
    }
}
