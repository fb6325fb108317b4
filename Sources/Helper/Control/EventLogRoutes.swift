import ControlAPI
import Foundation
import ScrollOffCore

/// Issue 16's endpoint: `GET /v1/export/rows`, the export as typed JSON rows
/// (`scrolloff export --json`); the CSV stays at `GET /v1/export`.
enum EventLogRoutes {
    static func add(to router: inout ControlRouter, engine: HelperEngine) {
        router.add(ControlEndpoints.exportRows) { _ in
            try await engineAnswer(engine) { () async throws(EngineError) in ExportRowsResponse(rows: try await engine.exportRows()) }
        }
    }
}
