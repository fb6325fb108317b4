/// The control API's route table (SPEC §13): every endpoint is defined once here, as a typed
/// value, and both sides use that value. The CLI's client builds its request from it (method,
/// path, body type, answer type); the helper registers its handler under it (Hummingbird's
/// router, `ControlRouteTable`). A path string is never written on either side, so the two cannot
/// drift apart.
///
/// Adding an endpoint: one `static let` below (with the query keys it reads) and its entry in
/// `endpoints` (`DeclarationListTests` fails without it), then `routes.add(ControlEndpoints.name) { … }`
/// in the helper and `client.call(ControlEndpoints.name, …)` in the CLI. `ContractLiteralTests` fails
/// when a path, a query key or a refusal rule is spelt anywhere else.
public enum ControlEndpoints {
    // Health and lists.
    public static let health = ControlEndpoint<NoBody, HealthResponse>(.get, "/v1/health", open: true)
    public static let lists = ControlEndpoint<NoBody, ListsResponse>(.get, "/v1/lists")
    public static let addList = ControlEndpoint<AddListRequest, AddListResponse>(.post, "/v1/lists")
    /// Streams `UpdateStreamLine`s as ndjson when asked to (`ControlClient.streamLines`).
    public static let updateLists = ControlEndpoint<UpdateListsRequest, UpdateListsResponse>(.post, "/v1/lists/update")
    public static let removeList = ControlEndpoint<NoBody, RemoveListResponse>(.delete, "/v1/lists/{name}")
    public static let doctor = ControlEndpoint<NoBody, DoctorFacts>(.get, "/v1/doctor")

    // Rules (SPEC §13 verbs).
    public static let status = ControlEndpoint<NoBody, StatusReport>(.get, "/v1/status")
    /// Query: `category`.
    public static let services = ControlEndpoint<NoBody, ServicesResponse>(.get, "/v1/services", query: [ControlQuery.category])
    public static let block = ControlEndpoint<EntriesRequest, BlockResult>(.post, "/v1/block")
    public static let unblock = ControlEndpoint<EntriesRequest, BlockResult>(.post, "/v1/unblock")
    public static let addSchedule = ControlEndpoint<ScheduleRequest, ScheduleReport>(.post, "/v1/schedules")
    public static let schedules = ControlEndpoint<NoBody, SchedulesResponse>(.get, "/v1/schedules")
    public static let removeSchedule = ControlEndpoint<NoBody, DoneResponse>(.delete, "/v1/schedules/{name}")
    public static let focus = ControlEndpoint<FocusRequest, FocusReport>(.post, "/v1/focus")
    public static let profiles = ControlEndpoint<NoBody, ProfilesResponse>(.get, "/v1/profiles")
    public static let addProfile = ControlEndpoint<ProfileRequest, ProfilesResponse>(.post, "/v1/profiles")

    // Credit.
    public static let wallet = ControlEndpoint<NoBody, WalletReport>(.get, "/v1/wallet")
    public static let use = ControlEndpoint<GrantRequest, GrantResult>(.post, "/v1/use")
    public static let peek = ControlEndpoint<GrantRequest, GrantResult>(.post, "/v1/peek")
    public static let token = ControlEndpoint<GrantRequest, GrantResult>(.post, "/v1/token")
    public static let stop = ControlEndpoint<GrantRequest, StopResult>(.post, "/v1/stop")
    /// Query: `entry`, the entry the bypass is for (SPEC §8).
    public static let bypassPreview = ControlEndpoint<NoBody, BypassPreview>(.get, "/v1/bypass/next", query: [ControlQuery.entry])
    public static let recordExercise = ControlEndpoint<ExerciseOutcomeRequest, DoneResponse>(.post, "/v1/exercises")

    // Insight.
    public static let addPlan = ControlEndpoint<PlanRequest, PlanReport>(.post, "/v1/plans")
    /// Query: `archived=true`.
    public static let plans = ControlEndpoint<NoBody, PlansResponse>(.get, "/v1/plans", query: [ControlQuery.archived])
    public static let archivePlan = ControlEndpoint<NoBody, DoneResponse>(.post, "/v1/plans/{id}/archive")
    public static let addAlternative = ControlEndpoint<AlternativeRequest, AlternativeReport>(.post, "/v1/alternatives")
    public static let alternatives = ControlEndpoint<NoBody, AlternativesResponse>(.get, "/v1/alternatives")
    /// Query: `period=day|week|month|year`.
    public static let stats = ControlEndpoint<NoBody, StatsReport>(.get, "/v1/stats", query: [ControlQuery.period])
    /// Query: `since=RFC3339`.
    public static let events = ControlEndpoint<NoBody, EventsResponse>(.get, "/v1/events", query: [ControlQuery.since])
    /// Server-Sent Events (`EventStream`), open: each event of the profiles the caller may view
    /// (`?profile=` narrows it to one), live; `?after=ID` or `Last-Event-ID` resumes.
    public static let eventStream = ControlEndpoint<NoBody, ServerSentEvents>(.get, "/v1/events/stream", open: true, query: [ControlQuery.after])
    /// Answers `text/csv`, not JSON.
    public static let export = ControlEndpoint<NoBody, CSVText>(.get, "/v1/export")
    /// SPEC §12: the same rows as `export`, typed (`scrolloff export --json`).
    public static let exportRows = ControlEndpoint<NoBody, ExportRowsResponse>(.get, "/v1/export/rows")

    // Household. Listing and answering requests are open to the router's profile
    // check: `?all=true` spans profiles and an answer acts on the request's own profile, so the
    // helper checks each in the handler.
    public static let adjust = ControlEndpoint<AdjustRequest, AdjustReport>(.post, "/v1/adjust")
    public static let askTime = ControlEndpoint<TimeRequestBody, TimeRequestInfo>(.post, "/v1/requests")
    /// Query: `all=true`.
    public static let timeRequests = ControlEndpoint<NoBody, TimeRequestsResponse>(.get, "/v1/requests", open: true, query: [ControlQuery.all])
    public static let approveRequest = ControlEndpoint<TimeRequestAnswerBody, TimeRequestAnswerReport>(.post, "/v1/requests/{id}/approve", open: true)
    public static let declineRequest = ControlEndpoint<TimeRequestAnswerBody, TimeRequestAnswerReport>(.post, "/v1/requests/{id}/decline", open: true)
    public static let removeProfile = ControlEndpoint<NoBody, DoneResponse>(.delete, "/v1/profiles/{name}")
    /// SPEC §7: the latest weekly digest (`scrolloff digest`).
    public static let digest = ControlEndpoint<NoBody, DigestReport>(.get, "/v1/digest")

    /// Every endpoint above, for the tests and the fuzz target that go over each one's decoder;
    /// add a new endpoint here too.
    /// SPEC §5a: an owner pauses a profile now, or lifts the pause.
    public static let pause = ControlEndpoint<PauseRequest, PauseReport>(.post, "/v1/pause")
    public static let resume = ControlEndpoint<NoBody, PauseReport>(.post, "/v1/resume")
    /// SPEC §4a: the profile's daily allowances.
    public static let allowances = ControlEndpoint<NoBody, AllowancesReport>(.get, "/v1/allowances")
    public static let setAllowance = ControlEndpoint<AllowanceRequest, AllowancesReport>(.post, "/v1/allowances")
    public static let clearAllowance = ControlEndpoint<AllowanceClearRequest, AllowancesReport>(.post, "/v1/allowances/clear")

    public static let endpoints: [any AnyControlEndpoint] = [
        health, lists, addList, updateLists, removeList, doctor, status, services, block, unblock, addSchedule, schedules,
        removeSchedule, focus, profiles, addProfile, wallet, use, peek, token, stop, bypassPreview, recordExercise, addPlan,
        plans, archivePlan, addAlternative, alternatives, stats, events, export, adjust, askTime, timeRequests,
        approveRequest, declineRequest, removeProfile,
        digest, exportRows, eventStream,
        pause, resume, allowances, setAllowance, clearAllowance,
    ]

    /// Every endpoint as method and template, for the test that the helper serves each one
    /// (`RouteTableTests`).
    public static let all: [(method: ControlMethod, template: String)] = endpoints.map { ($0.method, $0.template) }
}

/// A query parameter's name as the wire spells it. Declared only in `ControlQuery`, and each
/// endpoint lists the ones it reads, so the CLI and the helper cannot spell one differently.
public struct ControlQueryKey: Hashable, Sendable, CustomStringConvertible {
    public let name: String
    init(_ name: String) { self.name = name }
    public var description: String { name }
}

/// Query parameter names, shared the same way as the paths.
public enum ControlQuery {
    /// Every endpoint: the profile acted on; the default profile when missing (SPEC §11).
    public static let profile = ControlQueryKey("profile")
    /// `GET /v1/services?category=C`: only that category's services.
    public static let category = ControlQueryKey("category")
    /// `GET /v1/plans?archived=true`: archived plans too (a flag).
    public static let archived = ControlQueryKey("archived")
    /// `GET /v1/stats?period=P`: a `StatsPeriod`, `day` when missing.
    public static let period = ControlQueryKey("period")
    /// `GET /v1/events?since=T`: an RFC 3339 time (`WireTimeQuery`).
    public static let since = ControlQueryKey("since")
    /// `GET /v1/events/stream?after=ID`: resume after this event id (`EventStream.resumeID`).
    public static let after = ControlQueryKey("after")
    /// `GET /v1/requests?all=true`: every profile the caller may view (a flag).
    public static let all = ControlQueryKey("all")
    /// `GET /v1/bypass/next?entry=E`: the entry of the bypass, so the plan shown fits it (SPEC §8).
    public static let entry = ControlQueryKey("entry")

    /// Every key, for the document test.
    public static let keys: [ControlQueryKey] = [profile, category, archived, period, since, all, entry, after]

    /// A flag's value: `true` when set, left out of the query when not.
    public static func flag(_ on: Bool) -> String? { on ? flagOn : nil }
    static let flagOn = "true"

    /// `target` with one more query pair, its value percent-encoded as `ControlEndpoint.target`
    /// encodes them (the client adds `profile` to every request this way).
    public static func appending(_ key: ControlQueryKey, _ value: String, to target: String) -> String {
        target + (target.contains("?") ? "&" : "?") + key.name + "=" + ControlEndpointEncoding.queryValue(value)
    }
}

/// The name of a path template's parameter (`{name}` in `/v1/lists/{name}`), as the router hands
/// it to the handler.
public struct ControlPathKey: Hashable, Sendable, CustomStringConvertible {
    public let name: String
    init(_ name: String) { self.name = name }
    public var description: String { name }
}

/// The path parameters the templates use; `ControlEndpointTests` checks each template's parameter is one.
public enum ControlPath {
    /// A list, schedule or profile by its name.
    public static let name = ControlPathKey("name")
    /// A plan or a request for time by its number (`WireID`).
    public static let id = ControlPathKey("id")

    public static let keys: [ControlPathKey] = [name, id]
}

extension Dictionary where Key == String, Value == String {
    /// A matched route's parameter `key`.
    public subscript(key: ControlPathKey) -> String? { self[key.name] }

    /// A parsed query's value for `key` (`URLEncodedFields.parse`).
    public subscript(key: ControlQueryKey) -> String? { self[key.name] }

    /// A parsed query's value for `key`, nil when missing or empty (an empty value means "not given").
    public func nonEmpty(_ key: ControlQueryKey) -> String? { self[key.name].flatMap { $0.isEmpty ? nil : $0 } }

    /// Whether the flag `key` is set (`?all=true`); any other value is not.
    public func flag(_ key: ControlQueryKey) -> Bool { self[key.name] == ControlQuery.flagOn }
}

/// The methods the control API uses.
public enum ControlMethod: String, Sendable, Hashable {
    case get = "GET"
    case post = "POST"
    case delete = "DELETE"
}

/// What every endpoint has, whatever its body and answer types.
public protocol AnyControlEndpoint: Sendable {
    var method: ControlMethod { get }
    var template: String { get }
    /// The body type when the endpoint takes one (`ControlBodyDecoding` decodes it).
    var bodyType: (any ControlRequestBody.Type)? { get }
    /// The query keys it reads besides `profile`, which every endpoint reads.
    var query: [ControlQueryKey] { get }
    /// The name of its path parameter, if it has one (a `ControlPath` key).
    var parameterName: String? { get }
}

/// One endpoint: its method and path template, the body it takes and the answer it gives.
/// A template segment `{name}` is a parameter; an endpoint has at most one.
public struct ControlEndpoint<Body: Sendable, Answer: Sendable>: AnyControlEndpoint, CustomStringConvertible {
    public let method: ControlMethod
    /// `/v1/lists/{name}`.
    public let template: String
    /// Skips the router's profile check: health answers anyone who can reach the socket (`doctor`
    /// and monitoring need it, and it tells nothing private); the household request endpoints
    /// check each profile they touch in their handler.
    public let open: Bool
    /// The query keys it reads besides `profile`.
    public let query: [ControlQueryKey]

    init(_ method: ControlMethod, _ template: String, open: Bool = false, query: [ControlQueryKey] = []) {
        self.method = method
        self.template = template
        self.open = open
        self.query = query
    }

    public var description: String { "\(method.rawValue) \(template)" }

    public var bodyType: (any ControlRequestBody.Type)? {
        Body.self == NoBody.self ? nil : Body.self as? any ControlRequestBody.Type
    }

    /// The name of the template's parameter (`name` for `/v1/lists/{name}`), if any.
    public var parameterName: String? {
        for segment in template.split(separator: "/") where segment.hasPrefix("{") && segment.hasSuffix("}") {
            return String(segment.dropFirst().dropLast())
        }
        return nil
    }

    /// The request target: the template with its parameter filled in (percent-encoded as one
    /// segment) and the query appended, leaving out absent values.
    public func target(_ parameter: String? = nil, query: [(ControlQueryKey, String?)] = []) -> String {
        assert(query.allSatisfy { key, _ in self.query.contains(key) }, "\(self) does not read the query keys \(query.map(\.0))")
        var path = ""
        for segment in template.split(separator: "/", omittingEmptySubsequences: false).dropFirst() {
            path += "/"
            if segment.hasPrefix("{") && segment.hasSuffix("}") {
                path += ControlEndpointEncoding.segment(parameter ?? "")
            } else {
                path += segment
            }
        }
        let pairs = query.compactMap { key, value in value.map { "\(key.name)=\(ControlEndpointEncoding.queryValue($0))" } }
        return pairs.isEmpty ? path : path + "?" + pairs.joined(separator: "&")
    }
}

/// The body of endpoints that take none.
public struct NoBody: ControlRequestBody, Equatable {
    public static let fieldNames: [String] = []
    public init() {}
}

/// The answer of `GET /v1/export`: CSV text rather than JSON.
public struct CSVText: Sendable, Equatable {
    public var text: String
    public init(text: String) { self.text = text }
}

enum ControlEndpointEncoding {
    private static let unreserved: Set<UInt8> = Set(Array("ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789-._~".utf8))

    /// RFC 3986 §2.3: everything but unreserved characters is percent-encoded, so a segment never
    /// carries a `/`, `?` or `#` of its own.
    static func segment(_ text: String) -> String { encode(text, keeping: unreserved) }

    /// A query value; `:` stays readable for RFC 3339 times.
    static func queryValue(_ text: String) -> String { encode(text, keeping: unreserved.union([UInt8(ascii: ":")])) }

    private static func encode(_ text: String, keeping allowed: Set<UInt8>) -> String {
        var out = ""
        for byte in text.utf8 {
            if allowed.contains(byte) {
                out.unicodeScalars.append(Unicode.Scalar(byte))
            } else {
                let hex = Array("0123456789ABCDEF".utf8)
                out += "%" + String(decoding: [hex[Int(byte >> 4)], hex[Int(byte & 0x0F)]], as: UTF8.self)
            }
        }
        return out
    }
}
