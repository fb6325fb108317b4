import ControlAPI
import Foundation
import Testing

extension ControlEndToEnd {
/// The helper serves every endpoint of the route table the CLI calls (`ControlEndpoints`): none
/// answers "no such endpoint" or "wrong method".
@Suite
struct RouteTableTests {
    @Test func every_endpoint_of_the_route_table_is_served_by_the_helper() async throws {
        let server = try await EngineServer()
        defer { Task { await server.stop() } }
        for (method, template) in ControlEndpoints.all {
            // A parameter that names nothing; the answer may be 400/404 for that, but never the router's.
            let path = template.replacingOccurrences(of: "{name}", with: "nosuch").replacingOccurrences(of: "{id}", with: "999")
            let answer = try await curl(server.socketPath, method.rawValue, path, body: method == .get ? nil : "{}")
            #expect(answer.status != 405, "\(method.rawValue) \(template): \(answer.body)")
            if answer.status == 404 {
                let code = try decode(ControlErrorEnvelope.self, answer.body).error.code
                #expect(code != ControlErrorCode.notFound, "\(method.rawValue) \(template) is not served: \(answer.body)")
            }
        }
    }
}
}
