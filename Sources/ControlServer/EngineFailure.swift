import ControlAPI
import Engine
import Hummingbird
import ScrollOffCore
import ServiceKit

extension ControlFailure {
    /// The control API's answer for an engine error (SPEC §13 exit codes through the CLI):
    /// a rule's refusal is 409 with the rule, when it opens and the person's reason (exit 1);
    /// a request that cannot be carried out as written is 400 (exit 2); a name that does not
    /// exist is 404 `unknown_name` (exit 2); a refused database write is 500.
    package init(_ error: EngineError, now: Instant? = nil) {
        switch error {
        case .refused(let refusal):
            self.init(status: .conflict, code: ControlErrorCode.refused, message: refusal.message)
            self.error.rule = refusal.rule.wireName
            self.error.opensAt = refusal.opensAt?.date
            self.error.reason = refusal.reason
            self.error.subject = refusal.subject
            self.error.now = now?.date
        case .invalid(let text):
            self.init(status: .badRequest, code: ControlErrorCode.invalidArgument, message: text)
        case .notFound(let text):
            self.init(status: .notFound, code: ControlErrorCode.unknownName, message: text)
        case .storage, .catalog, .outcomeUnknown:
            self.init(status: .internalServerError, code: ControlErrorCode.storage, message: error.description)
        }
    }
}

/// Runs one engine command for a handler, turning its `EngineError` into the matching answer;
/// a refusal carries the engine's trusted time, so the CLI counts down from the helper's clock.
func engineAnswer<Answer: Encodable & Sendable>(
    _ engine: HelperEngine, _ status: HTTPResponse.Status = .ok, _ command: () async throws(EngineError) -> Answer
) async throws(ControlFailure) -> ControlResponse {
    do {
        let answer = try await command()
        return .json(status: status, body: ControlJSON.encode(answer), headers: [])
    } catch {
        throw ControlFailure(error, now: error.refusal == nil ? nil : await engine.trustedNow())
    }
}
