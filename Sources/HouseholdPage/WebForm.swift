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
        let form = WebForm(String(buffer: buffer))
        // The same bounds as the control API's bodies: a note of 16 KiB, or one with a line break
        // that would forge a line in the log, is refused before a handler sees it.
        do throws(WireRangeError) {
            for field in form.values.keys.sorted() { try WireText.check(field: field, form.values[field]!) }
        } catch {
            throw WebFailure(.badRequest, "\(error)")
        }
        return form
    }
}
