#if canImport(Glibc)
import ControlServer
import ControlTransport
import Engine
import Glibc
#endif
import ControlAPI
import Foundation
import Helper
import Testing

/// The control server over a real Unix socket, driven by curl and raw bytes.
extension ControlEndToEnd {
@Suite
struct ControlServerTests {
    @Test func health_answers_version_pid_and_the_callers_uid() async throws {
        let server = try await RunningServer()
        defer { Task { await server.stop() } }
        let answer = try await curl(server.socketPath, "GET", "/v1/health")
        #expect(answer.status == 200)
        let health = try decode(HealthResponse.self, answer.body)
        #expect(health.version == "test")
        #expect(health.pid == getpid())
        #expect(health.caller.uid == getuid())
        #expect(health.uptimeSeconds >= 0)
        #expect(answer.body.contains("\"uptime_seconds\""))
    }

    @Test func socket_file_is_0660_and_a_second_helper_on_the_same_path_is_refused() async throws {
        let server = try await RunningServer()
        defer { Task { await server.stop() } }
        var info = stat()
        #expect(lstat(server.socketPath, &info) == 0)
        #expect(info.st_mode & 0o777 == 0o660)
        #expect(info.st_mode & S_IFMT == S_IFSOCK)
        let second = ControlServer(
            configuration: ControlServerConfiguration(socket: ControlSocketFile(path: server.socketPath)),
            router: ControlRouter(authorizer: GroupMembershipAuthorizer(), logger: .init(label: "t")), logger: .init(label: "t")
        )
        await #expect(throws: ControlSocketError.alreadyRunning(path: server.socketPath)) { _ = try await second.bind() }
        // The first one still answers.
        #expect(try await curl(server.socketPath, "GET", "/v1/health").status == 200)
    }

    @Test func stale_socket_left_by_a_dead_helper_is_replaced() async throws {
        let directory = try makeTemporaryDirectory()
        defer { try? FileManager.default.removeItem(atPath: directory) }
        let path = directory + "/ctl.sock"
        // A socket file nobody listens on, as a killed helper leaves behind.
        let fd = socket(AF_UNIX, Int32(SOCK_STREAM.rawValue), 0)
        var address = sockaddr_un()
        address.sun_family = sa_family_t(AF_UNIX)
        withUnsafeMutableBytes(of: &address.sun_path) { raw in
            raw.copyBytes(from: Array(path.utf8))
            raw[path.utf8.count] = 0
        }
        _ = withUnsafePointer(to: &address) {
            $0.withMemoryRebound(to: sockaddr.self, capacity: 1) { bind(fd, $0, socklen_t(MemoryLayout<sockaddr_un>.size)) }
        }
        close(fd)
        #expect(FileManager.default.fileExists(atPath: path))
        let refused = try await cli(["lists", "list"], socket: path)
        #expect(refused.status == 3)
        #expect(refused.stderr.contains("Nothing answers"))

        let server = ControlServer(
            configuration: ControlServerConfiguration(socket: ControlSocketFile(path: path)),
            router: ControlRoutes.router(
                context: ControlContext(version: "t", lists: ListsController(stateDirectory: directory, clock: wallClock, logger: .init(label: "t")), clock: wallClock),
                logger: .init(label: "t")
            ),
            logger: .init(label: "t")
        )
        let bound = try await server.bind()
        let serving = Task { try await bound.serve() }
        #expect(try await curl(path, "GET", "/v1/health").status == 200)
        await bound.close()
        _ = try? await serving.value
        #expect(!FileManager.default.fileExists(atPath: path), "serve() removes its socket on the way out")
    }

    @Test(arguments: [
        ("GET", "/v1/nothing", 404, "not_found"),
        ("GET", "/", 404, "not_found"),
        ("DELETE", "/v1/health", 405, "method_not_allowed"),
        ("PUT", "/v1/lists", 405, "method_not_allowed"),
        ("GET", "/v1/lists/update", 405, "method_not_allowed"),
        ("DELETE", "/v1/lists/nosuchlist", 404, "list_not_found"),
        ("GET", "/v1/lists?profile=kids", 404, "profile_not_found"),
    ])
    func unknown_paths_and_wrong_methods_get_json_errors(method: String, path: String, status: Int, code: String) async throws {
        let server = try await RunningServer()
        defer { Task { await server.stop() } }
        let answer = try await curl(server.socketPath, method, path)
        #expect(answer.status == status)
        let envelope = try decode(ControlErrorEnvelope.self, answer.body)
        #expect(envelope.error.code == code)
        #expect(answer.body.contains("\"rule\":null"))
        #expect(answer.body.contains("\"opens_at\":null"))
        if status == 405 { #expect(answer.headers.lowercased().contains("allow:")) }
    }

    @Test(arguments: [
        (#"{"url": 5}"#, "the field 'url' must be a string"),
        (#"{"name": "x"}"#, "the field 'url' is missing"),
        (#"{"url": "file:///tmp/x", "nmae": "typo"}"#, "unknown field 'nmae'"),
        (#"{not json"#, "not valid JSON"),
        (#"["file:///tmp/x"]"#, "must be a JSON object"),
        (#"{"url": "ftp://example.org/list"}"#, "http://, https:// or file://"),
        (#"{"url": "file:///tmp/x", "name": "../etc"}"#, "cannot be used as a list name"),
    ])
    func malformed_or_invalid_json_gets_400_naming_the_field(body: String, expected: String) async throws {
        let server = try await RunningServer()
        defer { Task { await server.stop() } }
        let answer = try await curl(server.socketPath, "POST", "/v1/lists", body: body)
        #expect(answer.status == 400)
        let envelope = try decode(ControlErrorEnvelope.self, answer.body)
        #expect(envelope.error.message.contains(expected), "\(envelope.error.message)")
    }

    @Test func body_over_64_KiB_gets_413_and_the_server_keeps_serving() async throws {
        let server = try await RunningServer()
        defer { Task { await server.stop() } }
        let huge = #"{"url": "file:///tmp/x", "name": ""# + String(repeating: "a", count: 70_000) + #""}"#
        let answer = try await curl(server.socketPath, "POST", "/v1/lists", body: huge)
        #expect(answer.status == 413)
        #expect(try decode(ControlErrorEnvelope.self, answer.body).error.code == ControlErrorCode.payloadTooLarge)
        #expect(try await curl(server.socketPath, "GET", "/v1/health").status == 200)
    }

    @Test(arguments: [
        ("garbage bytes", Array("\u{01}\u{02}\u{03} not http at all\r\n\r\n".utf8)),
        ("bad Content-Length", Array("POST /v1/lists HTTP/1.1\r\nHost: x\r\nContent-Length: abc\r\n\r\n{}".utf8)),
        ("two Content-Lengths", Array("POST /v1/lists HTTP/1.1\r\nHost: x\r\nContent-Length: 2\r\nContent-Length: 5\r\n\r\n{}".utf8)),
        ("huge header", Array(("GET /v1/health HTTP/1.1\r\nHost: x\r\nX-Big: " + String(repeating: "b", count: 40_000) + "\r\n\r\n").utf8)),
        ("bad version", Array("GET /v1/health HTTP/9.9\r\nHost: x\r\n\r\n".utf8)),
    ])
    func malformed_http_gets_400_and_the_server_keeps_serving(label: String, bytes: [UInt8]) async throws {
        let server = try await RunningServer()
        defer { Task { await server.stop() } }
        let answer = try await rawExchange(server.socketPath, bytes)
        #expect(answer.hasPrefix("HTTP/1.1 400"), "\(label): \(answer.prefix(200))")
        #expect(answer.contains(#""code":"malformed_http""#), "\(label)")
        #expect(try await curl(server.socketPath, "GET", "/v1/health").status == 200)
    }

    @Test func keep_alive_connection_answers_two_requests_in_order() async throws {
        let server = try await RunningServer()
        defer { Task { await server.stop() } }
        let two = "GET /v1/health HTTP/1.1\r\nHost: x\r\n\r\nGET /v1/nothing HTTP/1.1\r\nHost: x\r\nConnection: close\r\n\r\n"
        let answer = try await rawExchange(server.socketPath, Array(two.utf8))
        let first = try #require(answer.range(of: "HTTP/1.1 200"))
        let second = try #require(answer.range(of: "HTTP/1.1 404"))
        #expect(first.lowerBound < second.lowerBound)
    }

    @Test func unprivileged_caller_is_seen_by_uid_and_refused_with_a_reason() async throws {
        // 0666 and a traversable folder, so uid 65534 can reach the socket at all.
        let server = try await RunningServer(socketMode: 0o666, directoryMode: 0o755)
        defer { Task { await server.stop() } }
        let health = try await curl(server.socketPath, "GET", "/v1/health", asUser: 65534)
        #expect(health.status == 200)
        #expect(try decode(HealthResponse.self, health.body).caller.uid == 65534)
        #expect(try decode(HealthResponse.self, health.body).caller.gid == 65534)

        let lists = try await curl(server.socketPath, "GET", "/v1/lists", asUser: 65534)
        #expect(lists.status == 403)
        let refusal = try decode(ControlErrorEnvelope.self, lists.body).error
        #expect(refusal.code == ControlErrorCode.forbidden)
        #expect(refusal.message.contains("uid 65534"))
        #expect(refusal.message.contains("group 'scrolloff'"))
    }

    @Test func lists_add_list_update_and_remove_over_curl() async throws {
        let server = try await RunningServer()
        defer { Task { await server.stop() } }
        let file = server.directory + "/ads.txt"
        try writeList(file, names: 3)
        let added = try await curl(server.socketPath, "POST", "/v1/lists", body: #"{"url": "file://\#(file)"}"#)
        #expect(added.status == 201, "\(added.body)")
        let result = try decode(AddListResponse.self, added.body).result
        #expect(result.name == "ads")
        #expect(result.list.entryCount == 3)

        let duplicate = try await curl(server.socketPath, "POST", "/v1/lists", body: #"{"url": "file://\#(file)", "name": "other"}"#)
        #expect(duplicate.status == 409)

        try writeList(file, names: 5)
        let updated = try await curl(server.socketPath, "POST", "/v1/lists/update", body: #"{"name": "ads"}"#)
        #expect(updated.status == 200)
        let update = try decode(UpdateListsResponse.self, updated.body)
        #expect(update.results.map(\.outcome) == [RefreshOutcome.updated])
        #expect(update.results.first?.list.entryCount == 5)

        let streamed = try await curl(server.socketPath, "POST", "/v1/lists/update", body: "{}", headers: ["Accept: application/x-ndjson"])
        #expect(streamed.status == 200)
        #expect(streamed.headers.lowercased().contains("transfer-encoding: chunked"))
        let events = try streamed.body.split(separator: "\n").map { try decode(UpdateStreamLine.self, String($0)) }
        #expect(events.last?.event == UpdateStreamLine.done)
        #expect(events.contains { $0.event == UpdateStreamLine.progress && $0.name == "ads" })
        #expect(events.contains { $0.event == UpdateStreamLine.resultEvent && $0.result?.name == "ads" })

        let listed = try decode(ListsResponse.self, try await curl(server.socketPath, "GET", "/v1/lists").body)
        #expect(listed.lists.map(\.name) == ["ads"])
        #expect(listed.lists.first?.state == ListState.fresh)
        #expect(await server.lists.allowedHosts() == [])

        let removed = try await curl(server.socketPath, "DELETE", "/v1/lists/ads")
        #expect(removed.status == 200)
        #expect(try decode(ListsResponse.self, try await curl(server.socketPath, "GET", "/v1/lists").body).lists.isEmpty)
    }

    @Test func the_clis_client_gets_update_progress_as_lines_while_the_refresh_runs() async throws {
        let server = try await RunningServer()
        defer { Task { await server.stop() } }
        let file = server.directory + "/ads.txt"
        try writeList(file, names: 3)
        let client = ControlClient(socketPath: server.socketPath)
        let socket = server.socketPath
        _ = try await offPool { try ControlClient(socketPath: socket).call(ControlEndpoints.addList, AddListRequest(url: "file://" + file)) }
        try writeList(file, names: 4)
        let lines = try await offPool { () throws -> [UpdateStreamLine] in
            var lines: [UpdateStreamLine] = []
            try client.streamLines(ControlEndpoints.updateLists, UpdateListsRequest(name: "ads")) { line in
                if let event = try? ControlJSON.decoder().decode(UpdateStreamLine.self, from: Data(line)) { lines.append(event) }
            }
            return lines
        }
        #expect(lines.first?.event == UpdateStreamLine.progress)
        #expect(lines.contains { $0.event == UpdateStreamLine.resultEvent && $0.result?.list.entryCount == 4 })
        #expect(lines.last?.event == UpdateStreamLine.done)
        // An error answer to a streaming request is thrown with the helper's words, not read as lines.
        #expect(throws: ControlClientError.self) {
            try client.streamLines(ControlEndpoints.updateLists, UpdateListsRequest(name: "nosuch")) { _ in }
        }
    }

    @Test func a_declared_body_over_the_limit_is_refused_at_once_and_the_connection_closed() async throws {
        let server = try await RunningServer()
        defer { Task { await server.stop() } }
        let started = ContinuousClock.now
        // The head alone, announcing 100 KB: answered without waiting for the body, then closed
        // (rawExchange reads until the server closes, or 5 s).
        let answer = try await rawExchange(server.socketPath, Array("POST /v1/lists HTTP/1.1\r\nHost: x\r\nContent-Length: 100000\r\n\r\n".utf8))
        #expect(answer.hasPrefix("HTTP/1.1 413"), "\(answer.prefix(200))")
        #expect(answer.contains(#""code":"payload_too_large""#))
        #expect(ContinuousClock.now - started < .seconds(3), "closed after the answer, not by a timeout")
        #expect(try await curl(server.socketPath, "GET", "/v1/health").status == 200)
    }
}
}
