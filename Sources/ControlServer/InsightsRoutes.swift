import ControlAPI
import Engine

/// SPEC §7's endpoints: the weekly digest (`scrolloff digest`). `stats` stays in `EngineRoutes`.
enum InsightsRoutes {
    static func add(to router: inout ControlRouter, engine: HelperEngine) {
        router.add(ControlEndpoints.digest) { r in
            try await engineAnswer(engine) { () async throws(EngineError) in try await engine.digest(profile: r.profile) }
        }
    }
}
