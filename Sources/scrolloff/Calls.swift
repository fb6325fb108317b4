import ArgumentParser
import ControlAPI
import Foundation

/// One call per verb: send, decode, and on failure print the helper's words and exit with the
/// SPEC §13 code (`talk`).
extension GlobalOptions {
    func get<Answer: Decodable>(_ type: Answer.Type, _ path: String, query: [(String, String?)] = []) throws -> Answer {
        let client = client()
        let target = path + Self.queryString(query)
        return try talk { () throws(ControlClientError) in try client.call(type, method: "GET", path: target) }
    }

    func send<Answer: Decodable>(_ type: Answer.Type, _ method: String, _ path: String, _ body: some Encodable) throws -> Answer {
        let client = client()
        return try talk { () throws(ControlClientError) in try client.call(type, method: method, path: path, body: body) }
    }

    func send<Answer: Decodable>(_ type: Answer.Type, _ method: String, _ path: String) throws -> Answer {
        let client = client()
        return try talk { () throws(ControlClientError) in try client.call(type, method: method, path: path) }
    }

    /// Prints `value` as JSON with `--json`, else runs `human`.
    func emit(_ value: some Encodable, human: () -> Void) {
        if json { Terminal.printJSON(value) } else { human() }
    }

    /// `?a=1&b=2`, leaving out absent values; values are percent-encoded.
    static func queryString(_ pairs: [(String, String?)]) -> String {
        let allowed = CharacterSet.alphanumerics.union(CharacterSet(charactersIn: "-._~:"))
        let parts = pairs.compactMap { key, value in
            value.map { "\(key)=\($0.addingPercentEncoding(withAllowedCharacters: allowed) ?? $0)" }
        }
        return parts.isEmpty ? "" : "?" + parts.joined(separator: "&")
    }

    /// A path segment, percent-encoded.
    static func segment(_ text: String) -> String {
        text.addingPercentEncoding(withAllowedCharacters: .alphanumerics.union(CharacterSet(charactersIn: "-._~"))) ?? text
    }
}

/// `--entries A,B` → ["A", "B"].
func splitList(_ text: String?) -> [String] {
    (text ?? "").split(separator: ",").map { $0.trimmingCharacters(in: .whitespaces) }.filter { !$0.isEmpty }
}
