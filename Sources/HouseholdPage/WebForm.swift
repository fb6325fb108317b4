import ControlAPI
import Foundation
import Hummingbird

/// An `application/x-www-form-urlencoded` body or query (HTML 5 §4.10.21.7): `+` is a space, then
/// percent-decoding. A name given twice keeps its first value, as the forms here never repeat one.
struct WebForm: Sendable {
    var values: [String: String] = [:]

    /// Parsed by the one form parser (`URLEncodedFields`), which the fuzz target runs too.
    init(_ text: String) {
        values = URLEncodedFields.parse(text)
    }

    subscript(_ key: String) -> String? {
        guard let value = values[key]?.trimmingCharacters(in: .whitespacesAndNewlines), !value.isEmpty else { return nil }
        return value
    }

    /// Reads a request's form body, at most `WebContext.maxUploadSize` bytes.
    static func read(_ request: Request, _ context: WebContext) async throws -> WebForm {
        var request = request
        let buffer = try await request.collectBody(upTo: context.maxUploadSize)
        return WebForm(String(buffer: buffer))
    }
}
