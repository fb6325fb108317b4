import ControlAPI
import Engine
import Foundation
import ScrollOffCore

/// SPEC §12's endpoint: `GET /v1/export/rows`, the export as typed JSON rows
/// (`scrolloff export --json`); the CSV stays at `GET /v1/export`.
enum EventLogRoutes {
    static func add(to router: inout ControlRouter, engine: HelperEngine, authorizer: any ControlAuthorizer) {
        // The rows of every profile the caller may view, as the CSV (SPEC §11).
        router.add(ControlEndpoints.exportRows) { r in
            let profiles = await ViewableProfiles.of(r.caller, engine: engine, authorizer: authorizer)
            return try await engineAnswer(engine) { () async throws(EngineError) in ExportRowsResponse(rows: try await engine.exportRows(profiles: profiles).map(ExportRowReport.init)) }
        }
    }
}
