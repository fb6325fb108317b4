import ControlAPI
import Testing

/// The route table's request targets, as the CLI sends them.
struct ControlEndpointTests {
    @Test func a_parameter_is_one_percent_encoded_segment_and_absent_query_values_are_left_out() {
        #expect(ControlEndpoints.removeList.target("my list/../x") == "/v1/lists/my%20list%2F..%2Fx")
        #expect(ControlEndpoints.archivePlan.target("12") == "/v1/plans/12/archive")
        #expect(ControlEndpoints.events.target(query: [(ControlQuery.since, "2026-11-21T18:00:00Z")]) == "/v1/events?since=2026-11-21T18:00:00Z")
        #expect(ControlEndpoints.plans.target(query: [(ControlQuery.archived, nil)]) == "/v1/plans")
        #expect(ControlEndpoints.services.target(query: [(ControlQuery.category, "social & video")]) == "/v1/services?category=social%20%26%20video")
    }

    @Test func every_endpoint_is_defined_once_and_has_at_most_one_parameter() {
        let keys = ControlEndpoints.all.map { "\($0.method.rawValue) \($0.template)" }
        #expect(Set(keys).count == keys.count)
        for (_, template) in ControlEndpoints.all {
            #expect(template.hasPrefix("/v1/"))
            #expect(template.split(separator: "/").count { $0.hasPrefix("{") } <= 1, "\(template)")
        }
    }

    @Test func every_path_parameter_is_declared_in_control_path() {
        let declared = Set(ControlPath.keys.map(\.name))
        let used = ControlEndpoints.endpoints.compactMap(\.parameterName)
        #expect(!used.isEmpty)
        #expect(Set(used).isSubset(of: declared), "\(Set(used).subtracting(declared))")
    }
}
