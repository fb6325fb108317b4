import ControlAPI
import Foundation
import Testing

/// No request crashes the helper: `POST /v1/adjust` with `{"seconds": -9223372036854775808}`
/// trapped `abs` and took the household's DNS down with no log line; `/v1/use` with `for_seconds`
/// = Int64.max wrapped to "−1 s", and Int64.max / 1000 trapped the grant's end. Every number of
/// every endpoint of the route table gets hostile values; each must be a 400 that names the range,
/// and afterwards the helper must still answer DNS and `/v1/status`.
@Suite struct ControlBoundsEndToEndTests {
    /// A body that is valid but for the field under test, for every endpoint with a body. The test
    /// fails for an endpoint of the route table missing here, so a new one gets its row.
    static let validBodies: [String: String] = [
        "POST /v1/lists": #"{"url": "http://127.0.0.1:9/bounds-list.txt", "name": "bounds"}"#,
        "POST /v1/lists/update": #"{"name": "no-such-list"}"#,
        "POST /v1/block": #"{"entries": ["tiktok"], "reason": "bounds"}"#,
        "POST /v1/unblock": #"{"entries": ["no-such-entry-bounds"]}"#,
        "POST /v1/schedules": #"{"name": "bounds", "from": "23:00", "to": "07:00", "days": "daily", "curfew": false, "strict": false, "entries": ["tiktok"]}"#,
        "POST /v1/focus": #"{"seconds": 60, "entries": ["tiktok"]}"#,
        "POST /v1/profiles": #"{"name": "bounds", "clients": ["127.0.0.99/32"]}"#,
        "POST /v1/use": #"{"entry": "tiktok", "for_seconds": 60}"#,
        "POST /v1/peek": #"{"entry": "tiktok"}"#,
        "POST /v1/token": #"{"entry": "tiktok"}"#,
        "POST /v1/stop": #"{"entry": "tiktok"}"#,
        "POST /v1/exercises": #"{"exercise": "no-such-exercise", "entry": "tiktok", "outcome": "skipped"}"#,
        "POST /v1/plans": #"{"when": "bored", "then": "walk"}"#,
        "POST /v1/alternatives": #"{"text": "read"}"#,
        "POST /v1/adjust": #"{"seconds": 60, "note": "bounds"}"#,
        "POST /v1/requests": #"{"seconds": 60, "note": "bounds"}"#,
        "POST /v1/requests/{id}/approve": #"{"note": "bounds"}"#,
        "POST /v1/requests/{id}/decline": #"{"note": "bounds"}"#,
        "POST /v1/pause": #"{"seconds": 60, "reason": "bounds"}"#,
        "POST /v1/allowances": #"{"seconds": 600, "entries": ["tiktok"], "days": "daily"}"#,
        "POST /v1/allowances/clear": #"{"entries": ["no-such-entry-bounds"]}"#,
    ]

    /// The numbers of the control API and their ranges, written out here (not read from the code
    /// under test); `optional` fields may be null.
    static let numbers: [(endpoint: String, field: String, lowest: Int64, highest: Int64, optional: Bool)] = [
        ("POST /v1/adjust", "seconds", -86_400, 86_400, false),
        ("POST /v1/requests", "seconds", 60, 86_400, false),
        ("POST /v1/focus", "seconds", 1, 604_800, false),
        ("POST /v1/use", "for_seconds", 1, 86_400, true),
        ("POST /v1/peek", "for_seconds", 1, 86_400, true),
        ("POST /v1/token", "for_seconds", 1, 86_400, true),
        ("POST /v1/stop", "for_seconds", 1, 86_400, true),
        ("POST /v1/pause", "seconds", 1, 604_800, true),
        ("POST /v1/allowances", "seconds", 1, 86_400, false),
    ]

    /// Values no number field allows: the two that crashed the helper and their kin.
    static let hostileNumbers = [
        "-9223372036854775808", "9223372036854775807", "9223372036854775", "-9223372036854775", "9223372036854775808",
        "-100000000000000000000", "0", "1e308", "-1e308", "2.5", "\"900\"", "\"\"", "true", "[]", "{}", "null",
    ]

    /// Wrong types for every other field (no string, list or object field takes a number).
    static let hostileOthers = ["-9223372036854775808", "1e308", "{}", "[[]]"]

    @Test func every_number_of_every_endpoint_is_refused_out_of_range_with_the_range_and_the_helper_keeps_serving() throws {
        let scratch = try Scratch()
        let helper = try HouseholdHelper(scratch: scratch)
        let dnsPort = try Self.dnsPort(helper)
        #expect(try helper.cli(["block", "tiktok"]).exitCode == 0)
        #expect(try helper.cli(["block", "tiktok", "--profile", "kid"]).exitCode == 0)

        // The route table: every endpoint with a body has a valid body here.
        let withBodies = ControlEndpoints.endpoints.filter { $0.bodyType != nil }.map { "\($0.method.rawValue) \($0.template)" }
        #expect(Set(withBodies) == Set(Self.validBodies.keys), "endpoints with a body: \(withBodies.sorted())")
        // Every bounded field the contract declares is in the table above, and only those.
        var declared: Set<String> = []
        for endpoint in ControlEndpoints.endpoints {
            guard let type = endpoint.bodyType, let base = Self.validBodies["\(endpoint.method.rawValue) \(endpoint.template)"] else { continue }
            for field in type.fieldNames {
                if case .outOfRange? = Self.locally(type, Self.with(base, field, "1e308")) {
                    declared.insert("\(endpoint.method.rawValue) \(endpoint.template) \(field)")
                }
            }
        }
        #expect(declared == Set(Self.numbers.map { "\($0.endpoint) \($0.field)" }), "bounded fields: \(declared.sorted())")

        for number in Self.numbers {
            let base = try #require(Self.validBodies[number.endpoint])
            let path = String(number.endpoint.split(separator: " ")[1])
            let values = Self.hostileNumbers.filter { !(number.optional && $0 == "null") }
                + ["\(number.lowest - 1)", "\(number.highest + 1)"]
            for value in values {
                let answer = try RawHTTP.control(helper.socket, "POST", path, body: Self.with(base, number.field, value))
                #expect(answer.status == 400, "\(number.endpoint) \(number.field)=\(value): \(answer)")
                #expect(answer.body.contains("between \(number.lowest) and \(number.highest)") && answer.body.contains("you sent"),
                        "\(number.endpoint) \(number.field)=\(value): \(answer.body)")
            }
        }

        // Every other field of every endpoint, with a wrong type: refused, never a 5xx.
        for (endpoint, base) in Self.validBodies.sorted(by: { $0.key < $1.key }) {
            let path = String(endpoint.split(separator: " ")[1]).replacingOccurrences(of: "{id}", with: "1")
            let fields = try #require(ControlEndpoints.endpoints.first { "\($0.method.rawValue) \($0.template)" == endpoint }?.bodyType).fieldNames
            for field in fields where !Self.numbers.contains(where: { $0.endpoint == endpoint && $0.field == field }) {
                for value in Self.hostileOthers {
                    let answer = try RawHTTP.control(helper.socket, "POST", path, body: Self.with(base, field, value))
                    #expect(answer.status == 400, "\(endpoint) \(field)=\(value): \(answer)")
                }
            }
        }

        // Ids in paths, and the one time in a query.
        for template in ["/v1/plans/{id}/archive", "/v1/requests/{id}/approve", "/v1/requests/{id}/decline"] {
            for id in ["0", "-1", "-9223372036854775808", "9223372036854775808", "99999999999999999999", "1e3", "abc", "%00", "+1"] {
                let body = template.hasPrefix("/v1/requests") ? "{}" : nil
                let answer = try RawHTTP.control(helper.socket, "POST", template.replacingOccurrences(of: "{id}", with: id), body: body)
                #expect(answer.status == 400 && answer.body.contains("between 1 and 9223372036854775807"), "\(template) id \(id): \(answer)")
            }
            let missing = try RawHTTP.control(helper.socket, "POST", template.replacingOccurrences(of: "{id}", with: "424242"),
                                              body: template.hasPrefix("/v1/requests") ? "{}" : nil)
            #expect(missing.status == 404, "\(template) id 424242: \(missing)")
        }
        for since in ["1969-12-31T23:59:59Z", "10000-01-01T00:00:00Z", "-9223372036854775808", "1e308", "soon", "2026-13-45T99:99:99Z"] {
            let answer = try RawHTTP.control(helper.socket, "GET", "/v1/events?since=\(since)")
            #expect(answer.status == 400 && answer.body.contains("between 1970-01-01T00:00:00Z and 9999-12-31T23:59:59Z"), "since \(since): \(answer)")
        }
        #expect(try RawHTTP.control(helper.socket, "GET", "/v1/events?since=2026-11-21T18:00:00Z").status == 200)

        try Self.expectServing(helper, dnsPort: dnsPort)
        #expect(!helper.child.stderr.contains("control handler failed"), "\(helper.child.stderr)")
    }

    /// The two requests of the issue, from a profile's owner who is not root (uid 65534 owns
    /// `kid`), through curl as that user: refused with the range, and the helper serves on.
    @Test func a_profile_owner_cannot_crash_the_helper_with_an_adjustment_or_a_spend_limit() throws {
        let scratch = try Scratch()
        let helper = try HouseholdHelper(scratch: scratch)
        let dnsPort = try Self.dnsPort(helper)
        #expect(try helper.cli(["block", "tiktok", "--profile", "kid"]).exitCode == 0)
        #expect(try helper.cli(["block", "tiktok"]).exitCode == 0)
        var info = stat()
        #expect(stat(helper.socket, &info) == 0)
        for (path, body, range) in [
            ("/v1/adjust?profile=kid", #"{"seconds": -9223372036854775808, "note": "crash"}"#, "between -86400 and 86400"),
            ("/v1/use?profile=kid", #"{"entry": "tiktok", "for_seconds": 9223372036854775807}"#, "between 1 and 86400"),
            ("/v1/use?profile=kid", #"{"entry": "tiktok", "for_seconds": 9223372036854775}"#, "between 1 and 86400"),
        ] {
            let answer = try runWithStatus("/usr/bin/setpriv", [
                "--reuid=65534", "--regid=\(info.st_gid)", "--clear-groups", "/usr/bin/curl", "-s", "--max-time", "10",
                "--unix-socket", helper.socket, "-X", "POST", "-H", "Content-Type: application/json", "--data-binary", body,
                "-w", "\n%{http_code}", "http://localhost\(path)",
            ])
            #expect(answer.output.hasSuffix("\n400") && answer.output.contains(range) && answer.output.contains("you sent"), "\(path) \(body): \(answer)")
            #expect(!answer.output.contains("−1 s") && !answer.output.contains("-1 s"), "\(answer)")
        }
        try Self.expectServing(helper, dnsPort: dnsPort)
    }

    /// RFC 9112 §6.1: a transfer coding the server does not know is a 501 (or 400), never a 500, on
    /// the control socket and on the household page; the helper serves on.
    @Test(arguments: ["xchunked", "gzip, chunked", "chunked, gzip", "identity", "chunked;q=1"])
    func an_unknown_transfer_coding_is_refused_as_not_implemented_on_the_socket_and_the_page(_ coding: String) throws {
        let scratch = try Scratch()
        let helper = try HouseholdHelper(scratch: scratch)
        let dnsPort = try Self.dnsPort(helper)
        #expect(try helper.cli(["block", "tiktok"]).exitCode == 0)
        let body = "5\r\nhello\r\n0\r\n\r\n"
        let request = Array(("POST /v1/block HTTP/1.1\r\nHost: x\r\nContent-Type: application/json\r\nTransfer-Encoding: \(coding)\r\n"
            + "Connection: close\r\n\r\n" + body).utf8)
        let control = try RawHTTP.exchange(unixSocket: helper.socket, request)
        #expect([400, 501].contains(control.status), "control socket, \(coding): \(control)")
        let page = Array(("POST /ask HTTP/1.1\r\nHost: x\r\nContent-Type: application/x-www-form-urlencoded\r\nTransfer-Encoding: \(coding)\r\n"
            + "Connection: close\r\n\r\n" + body).utf8)
        let web = try RawHTTP.exchange(tcpPort: helper.webPort, page)
        #expect([400, 501].contains(web.status), "page, \(coding): \(web)")
        try Self.expectServing(helper, dnsPort: dnsPort)
        #expect(!helper.child.stderr.contains("control request failed"), "\(helper.child.stderr)")
    }

    /// Chunked bodies, which HTTP/1.1 clients may send, still work on both.
    @Test func a_chunked_body_is_still_read_on_the_socket_and_the_page() throws {
        let scratch = try Scratch()
        let helper = try HouseholdHelper(scratch: scratch)
        let json = #"{"entries": ["tiktok"]}"#
        let chunk = String(json.utf8.count, radix: 16) + "\r\n" + json + "\r\n0\r\n\r\n"
        let request = Array(("POST /v1/block HTTP/1.1\r\nHost: x\r\nContent-Type: application/json\r\nTransfer-Encoding: chunked\r\n"
            + "Connection: close\r\n\r\n" + chunk).utf8)
        let answer = try RawHTTP.exchange(unixSocket: helper.socket, request)
        #expect(answer.status == 200, "\(answer)")
        let page = Array(("POST /ask HTTP/1.1\r\nHost: x\r\nContent-Type: application/x-www-form-urlencoded\r\nTransfer-Encoding: chunked\r\n"
            + "Connection: close\r\n\r\n4\r\na=b&\r\n0\r\n\r\n").utf8)
        // No session cookie, so the form is refused for its missing token: the body was read.
        #expect(try RawHTTP.exchange(tcpPort: helper.webPort, page).status == 403)
    }

    // MARK: Helpers

    static func dnsPort(_ helper: HouseholdHelper) throws -> Int {
        let line = try helper.child.waitForLine { $0.hasPrefix("listening udp 127.0.0.1:") }
        return try #require(line.split(separator: ":").last.flatMap { Int($0) })
    }

    /// The helper is up, answers DNS (a blocked name, answered locally) and `/v1/status`.
    static func expectServing(_ helper: HouseholdHelper, dnsPort: Int) throws {
        #expect(helper.child.isRunning, "the helper exited: \(helper.child.stderr.suffix(2000))")
        #expect(try shortA(dnsPort, "tiktok.com") == "0.0.0.0")
        let status = try RawHTTP.control(helper.socket, "GET", "/v1/status")
        #expect(status.status == 200 && status.body.contains("\"entries\""), "\(status)")
    }

    /// `base` with `field` set to the JSON text `value`.
    static func with(_ base: String, _ field: String, _ value: String) -> String {
        var object = (try? JSONSerialization.jsonObject(with: Data(base.utf8)) as? [String: Any]) ?? [:]
        object.removeValue(forKey: field)
        let rest = String(decoding: (try? JSONSerialization.data(withJSONObject: object, options: [.sortedKeys])) ?? Data("{}".utf8), as: UTF8.self)
        let inner = rest.dropFirst().dropLast()
        return "{\"\(field)\": \(value)" + (inner.isEmpty ? "" : ", " + inner) + "}"
    }

    /// What the contract's own decoder says of a body, to find the bounded fields it declares.
    static func locally(_ type: any ControlRequestBody.Type, _ body: String) -> ControlBodyError? {
        func decode<Body: ControlRequestBody>(_ type: Body.Type) -> ControlBodyError? {
            do throws(ControlBodyError) { _ = try ControlBodyDecoding.decode(type, from: Array(body.utf8)) } catch { return error }
            return nil
        }
        return decode(type)
    }
}

/// HTTP/1.1 by hand over a Unix or TCP socket, for requests no client library would send
/// (hostile bodies, unknown transfer codings). One request per connection (`Connection: close`);
/// the answer is read until the server closes, within `seconds`.
enum RawHTTP {
    struct Answer: CustomStringConvertible {
        var status: Int
        var body: String
        var description: String { "HTTP \(status): \(body.prefix(600))" }
    }

    static func control(_ socket: String, _ method: String, _ target: String, body: String? = nil) throws -> Answer {
        var head = "\(method) \(target) HTTP/1.1\r\nHost: scrolloff\r\nConnection: close\r\n"
        if let body { head += "Content-Type: application/json\r\nContent-Length: \(body.utf8.count)\r\n" }
        return try exchange(unixSocket: socket, Array((head + "\r\n" + (body ?? "")).utf8))
    }

    static func exchange(unixSocket path: String, _ request: [UInt8], seconds: Int = 10) throws -> Answer {
        let fd = socket(AF_UNIX, Int32(SOCK_STREAM.rawValue), 0)
        guard fd >= 0 else { throw HarnessError("socket: errno \(errno)") }
        defer { close(fd) }
        var address = sockaddr_un()
        address.sun_family = sa_family_t(AF_UNIX)
        withUnsafeMutableBytes(of: &address.sun_path) { raw in
            for (i, byte) in path.utf8.prefix(raw.count - 1).enumerated() { raw[i] = byte }
        }
        let connected = withUnsafePointer(to: &address) {
            $0.withMemoryRebound(to: sockaddr.self, capacity: 1) { connect(fd, $0, socklen_t(MemoryLayout<sockaddr_un>.size)) }
        }
        guard connected == 0 else { throw HarnessError("cannot connect to \(path): errno \(errno) (is the helper still running?)") }
        return try talk(fd, request, seconds: seconds)
    }

    static func exchange(tcpPort port: Int, _ request: [UInt8], seconds: Int = 10) throws -> Answer {
        let fd = socket(AF_INET, Int32(SOCK_STREAM.rawValue), 0)
        guard fd >= 0 else { throw HarnessError("socket: errno \(errno)") }
        defer { close(fd) }
        var address = sockaddr_in()
        address.sin_family = sa_family_t(AF_INET)
        address.sin_addr.s_addr = inet_addr("127.0.0.1")
        address.sin_port = in_port_t(UInt16(port).bigEndian)
        let connected = withUnsafePointer(to: &address) {
            $0.withMemoryRebound(to: sockaddr.self, capacity: 1) { connect(fd, $0, socklen_t(MemoryLayout<sockaddr_in>.size)) }
        }
        guard connected == 0 else { throw HarnessError("cannot connect to 127.0.0.1:\(port): errno \(errno)") }
        return try talk(fd, request, seconds: seconds)
    }

    private static func talk(_ fd: Int32, _ request: [UInt8], seconds: Int) throws -> Answer {
        var timeout = timeval(tv_sec: seconds, tv_usec: 0)
        setsockopt(fd, SOL_SOCKET, SO_RCVTIMEO, &timeout, socklen_t(MemoryLayout<timeval>.size))
        setsockopt(fd, SOL_SOCKET, SO_SNDTIMEO, &timeout, socklen_t(MemoryLayout<timeval>.size))
        var sent = 0
        while sent < request.count {
            let n = request[sent...].withUnsafeBytes { send(fd, $0.baseAddress, $0.count, Int32(MSG_NOSIGNAL)) }
            guard n > 0 else { break } // The server may answer and close before taking the whole request.
            sent += n
        }
        var received: [UInt8] = []
        var buffer = [UInt8](repeating: 0, count: 65_536)
        let deadline = Date().addingTimeInterval(Double(seconds))
        while Date() < deadline {
            let n = recv(fd, &buffer, buffer.count, 0)
            if n <= 0 { break }
            received += buffer[0..<n]
        }
        let text = String(decoding: received, as: UTF8.self)
        guard let line = text.split(separator: "\r\n", maxSplits: 1).first, line.hasPrefix("HTTP/1.1 "),
              let status = Int(line.dropFirst(9).prefix(3)) else {
            throw HarnessError("no HTTP answer: \(text.prefix(300))")
        }
        let body = text.components(separatedBy: "\r\n\r\n").dropFirst().joined(separator: "\r\n\r\n")
        return Answer(status: status, body: body)
    }
}
