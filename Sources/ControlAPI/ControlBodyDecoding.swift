import Foundation

/// Why a request body was not accepted; the helper answers 400 for both.
public enum ControlBodyError: Error, Hashable, Sendable, CustomStringConvertible {
    /// Not JSON, not an object, an unknown field, a missing one or a mistyped one (`malformed_json`).
    case malformed(String)
    /// A number (or what stands in a number's place) outside its field's range (`invalid_argument`).
    case outOfRange(WireRangeError)

    public var description: String {
        switch self {
        case .malformed(let detail): detail
        case .outOfRange(let error): error.description
        }
    }
}

/// The one decoding of a request body, as the helper runs it on every endpoint with a body
/// (`ControlRouter`) and the fuzz target runs it on arbitrary bytes: strict JSON, unknown fields
/// refused, every bounded field checked while decoding. In the contract module so that both link
/// the same code.
public enum ControlBodyDecoding {
    /// Decodes `bytes` strictly as `Body`: unknown fields and wrong types are refused with a message
    /// naming the field. An empty body decodes as `{}` so bodies whose fields are all optional may
    /// be left out.
    public static func decode<Body: ControlRequestBody>(_ type: Body.Type, from body: [UInt8]) throws(ControlBodyError) -> Body {
        let bytes = body.allSatisfy({ $0 == 0x20 || $0 == 0x0A || $0 == 0x0D || $0 == 0x09 }) ? Array("{}".utf8) : body
        let object: Any
        do {
            object = try JSONSerialization.jsonObject(with: Data(bytes), options: [])
        } catch {
            throw .malformed("the body is not valid JSON (\((error as NSError).userInfo[NSDebugDescriptionErrorKey] as? String ?? "parse error"))")
        }
        guard let fields = object as? [String: Any] else {
            throw .malformed("the body must be a JSON object such as {\"\(Body.fieldNames.first ?? "name")\": ...}")
        }
        let unknown = fields.keys.filter { !Body.fieldNames.contains($0) }.sorted()
        if let first = unknown.first {
            throw .malformed("unknown field '\(WireRangeError.quoted(first))'; this endpoint takes \(Body.fieldNames.map { "'\($0)'" }.joined(separator: ", "))")
        }
        do throws(WireRangeError) {
            for field in fields.keys.sorted() { try WireText.check(field: field, json: fields[field]!) }
        } catch {
            throw .outOfRange(error)
        }
        do {
            return try ControlJSON.decoder().decode(Body.self, from: Data(bytes))
        } catch let error as WireRangeError {
            throw .outOfRange(error)
        } catch let error as DecodingError {
            throw .malformed(ControlJSON.describe(error))
        } catch {
            throw .malformed("\(error)")
        }
    }
}
