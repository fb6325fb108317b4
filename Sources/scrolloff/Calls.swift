import ArgumentParser
import ControlAPI
import ControlTransport
import Foundation

/// One call per verb: send, decode, and on failure print the helper's words and exit with the
/// SPEC §13 code (`talk`).
extension GlobalOptions {
    /// Calls an endpoint of the route table (`ControlEndpoints`) that takes no body.
    func call<Answer: Decodable>(
        _ endpoint: ControlEndpoint<NoBody, Answer>, parameter: String? = nil, query: [(ControlQueryKey, String?)] = []
    ) throws -> Answer {
        let client = client()
        return try talk { () throws(ControlClientError) in try client.call(endpoint, parameter: parameter, query: query) }
    }

    /// Calls an endpoint of the route table with its body (and its path parameter, if it has one).
    func call<Body: Encodable, Answer: Decodable>(
        _ endpoint: ControlEndpoint<Body, Answer>, _ body: Body, parameter: String? = nil
    ) throws -> Answer {
        let client = client()
        return try talk { () throws(ControlClientError) in try client.call(endpoint, body, parameter: parameter) }
    }

    /// Prints `value` as JSON with `--json`, else runs `human`.
    func emit(_ value: some Encodable, human: () -> Void) {
        if json { Terminal.printJSON(value) } else { human() }
    }
}

/// `--entries A,B` → ["A", "B"].
func splitList(_ text: String?) -> [String] {
    (text ?? "").split(separator: ",").map { $0.trimmingCharacters(in: .whitespaces) }.filter { !$0.isEmpty }
}
