import Foundation
import ListFetch
import ScrollOffCore
import Testing

/// The fetcher against a real python HTTP server on loopback, through the real libcurl.
@Suite("ListFetcher over real HTTP")
struct ListFetcherTests {
    /// Runs `body` with a fresh server, a destination path and a recording sleeper; cleans up after.
    func withServer<T>(
        policy: FetchPolicy = Fixtures.quickPolicy,
        _ body: (ListServer, ListFetcher, String, RecordingSleeper) async throws -> T
    ) async throws -> T {
        let server = try ListServer.start()
        defer { server.stop() }
        let sleeper = RecordingSleeper()
        let destination = Scratch.uniquePath("download")
        defer { Scratch.remove(destination) }
        return try await body(server, ListFetcher(policy: policy, sleeper: sleeper.sleeper), destination, sleeper)
    }

    @Test func http_200_streams_the_body_to_disk_and_captures_validators() async throws {
        try await withServer { server, fetcher, destination, _ async throws in
            let result = try await fetcher.fetch(server.url("/etag"), into: destination)
            #expect(result.kind == .downloaded)
            #expect(result.httpStatus == 200)
            #expect(result.bytesWritten == Int64(Fixtures.goodList.count))
            #expect(result.validators == ConditionalValidators(etag: "\"list-v1\"", lastModified: "Wed, 21 Oct 2026 07:28:00 GMT"))
            #expect(result.attempts == 1)
            #expect(Scratch.bytes(destination) == Fixtures.goodList)
        }
    }

    @Test func requests_name_the_project_and_offer_compression() async throws {
        try await withServer { server, fetcher, destination, _ async throws in
            _ = try await fetcher.fetch(server.url("/etag"), into: destination)
            let request = try #require(try server.requests(to: "/etag").first)
            #expect(request.headers["user-agent"] == "scrolloff/0.1.0 (+list refresh)")
            #expect(request.headers["accept-encoding"]?.contains("gzip") == true)
            #expect(request.headers["if-none-match"] == nil)
        }
    }

    @Test func second_fetch_sends_if_none_match_and_gets_304() async throws {
        try await withServer { server, fetcher, destination, _ async throws in
            let first = try await fetcher.fetch(server.url("/etag"), into: destination)
            let second = try await fetcher.fetch(server.url("/etag"), into: destination, conditional: first.validators)
            #expect(second.kind == .notModified)
            #expect(second.httpStatus == 304)
            #expect(second.validators.etag == "\"list-v1\"")
            let seen = try server.requests(to: "/etag")
            #expect(seen.count == 2)
            #expect(seen.last?.headers["if-none-match"] == "\"list-v1\"")
            #expect(seen.last?.headers["if-modified-since"] == "Wed, 21 Oct 2026 07:28:00 GMT")
        }
    }

    @Test func if_modified_since_alone_gets_304_and_keeps_the_known_date() async throws {
        try await withServer { server, fetcher, destination, _ async throws in
            let first = try await fetcher.fetch(server.url("/lastmod"), into: destination)
            #expect(first.validators.etag == nil)
            let second = try await fetcher.fetch(server.url("/lastmod"), into: destination, conditional: first.validators)
            #expect(second.kind == .notModified)
            // The 304 repeated no validators, so the ones sent still describe the copy.
            #expect(second.validators == first.validators)
            #expect(try server.requests(to: "/lastmod").last?.headers["if-modified-since"] == "Wed, 21 Oct 2026 07:28:00 GMT")
        }
    }

    @Test func validators_with_line_breaks_are_never_sent() async throws {
        try await withServer { server, fetcher, destination, _ async throws in
            let tampered = ConditionalValidators(etag: "\"list-v1\"\r\nX-Injected: 1", lastModified: "Wed\n, 21 Oct")
            let result = try await fetcher.fetch(server.url("/etag"), into: destination, conditional: tampered)
            #expect(result.kind == .downloaded)
            let headers = try #require(try server.requests(to: "/etag").first?.headers)
            #expect(headers["x-injected"] == nil)
            #expect(headers["if-none-match"] == nil)
            #expect(headers["if-modified-since"] == nil)
        }
    }

    @Test func gzip_body_is_stored_decoded() async throws {
        try await withServer { server, fetcher, destination, _ async throws in
            let result = try await fetcher.fetch(server.url("/gzip"), into: destination)
            #expect(Scratch.bytes(destination) == Fixtures.goodList)
            #expect(result.bytesWritten == Int64(Fixtures.goodList.count))
        }
    }

    @Test func three_redirects_are_followed_to_the_list() async throws {
        try await withServer { server, fetcher, destination, _ async throws in
            let result = try await fetcher.fetch(server.url("/redirect/3"), into: destination)
            #expect(result.redirectCount == 3)
            #expect(result.effectiveURL == server.url("/redirect/0"))
            #expect(result.validators.etag == "\"list-v1\"")
            #expect(Scratch.bytes(destination) == Fixtures.goodList)
        }
    }

    @Test func five_redirects_are_allowed_and_six_are_not() async throws {
        try await withServer { server, fetcher, destination, _ async throws in
            let five = try await fetcher.fetch(server.url("/redirect/5"), into: destination)
            #expect(five.redirectCount == 5)
            await #expect(throws: ListFetchError.tooManyRedirects(url: server.url("/redirect/6"), limit: 5)) {
                try await fetcher.fetch(server.url("/redirect/6"), into: destination)
            }
        }
    }

    @Test func redirect_loop_stops_after_five_hops_without_retrying() async throws {
        try await withServer { server, fetcher, destination, sleeper async throws in
            await #expect(throws: ListFetchError.tooManyRedirects(url: server.url("/loop"), limit: 5)) {
                try await fetcher.fetch(server.url("/loop"), into: destination)
            }
            // The first request plus five followed redirects, one attempt only.
            #expect(try server.requests(to: "/loop").count == 6)
            #expect(sleeper.recorded.isEmpty)
        }
    }

    @Test func redirect_to_a_file_url_is_refused() async throws {
        try await withServer { server, fetcher, destination, _ async throws in
            let error = await #expect(throws: ListFetchError.self) {
                try await fetcher.fetch(server.url("/redirect-file"), into: destination)
            }
            #expect(error?.code == "redirect-refused")
            #expect(Scratch.bytes(destination)?.isEmpty != false)
        }
    }

    @Test func server_error_twice_then_success_takes_three_attempts() async throws {
        try await withServer { server, fetcher, destination, sleeper async throws in
            let url = server.url("/flaky/twice/2")
            let result = try await fetcher.fetch(url, into: destination)
            #expect(result.attempts == 3)
            #expect(result.retriedErrors == [.httpStatus(url: url, status: 500), .httpStatus(url: url, status: 500)])
            #expect(sleeper.recorded == [.seconds(1), .seconds(2)])
            #expect(Scratch.bytes(destination) == Fixtures.goodList)
        }
    }

    @Test func three_server_errors_exhaust_the_attempts() async throws {
        try await withServer { server, fetcher, destination, sleeper async throws in
            let url = server.url("/flaky/always/9")
            await #expect(throws: ListFetchError.httpStatus(url: url, status: 500)) {
                try await fetcher.fetch(url, into: destination)
            }
            #expect(try server.requests(to: "/flaky/always/9").count == 3)
            #expect(sleeper.recorded.count == 2)
        }
    }

    @Test func retry_after_from_the_server_lengthens_the_wait() async throws {
        try await withServer { server, fetcher, destination, sleeper async throws in
            let result = try await fetcher.fetch(server.url("/flaky/busy/1?status=503&retry_after=7"), into: destination)
            #expect(result.attempts == 2)
            #expect(sleeper.recorded == [.seconds(7)])
        }
    }

    @Test(arguments: [404, 403, 410])
    func client_errors_are_not_retried(status: Int) async throws {
        try await withServer { server, fetcher, destination, sleeper async throws in
            let url = server.url("/status/\(status)")
            await #expect(throws: ListFetchError.httpStatus(url: url, status: status)) {
                try await fetcher.fetch(url, into: destination)
            }
            #expect(try server.requests(to: "/status/\(status)").count == 1)
            #expect(sleeper.recorded.isEmpty)
        }
    }

    @Test func stalled_body_times_out_as_a_stall_on_every_attempt() async throws {
        try await withServer { server, fetcher, destination, sleeper async throws in
            let url = server.url("/stall")
            await #expect(throws: ListFetchError.timedOut(url: url, phase: .stalled, limit: .seconds(1))) {
                try await fetcher.fetch(url, into: destination)
            }
            #expect(try server.requests(to: "/stall").count == 3)
            #expect(sleeper.recorded.count == 2)
        }
    }

    @Test func total_timeout_ends_a_transfer_that_trickles() async throws {
        var policy = Fixtures.quickPolicy
        policy.totalTimeout = .seconds(1)
        policy.stallTimeout = .seconds(5)
        policy.attempts = 1
        try await withServer(policy: policy) { server, fetcher, destination, _ async throws in
            let url = server.url("/slow?bytes=4000&pieces=40&delay_ms=100")
            await #expect(throws: ListFetchError.timedOut(url: url, phase: .total, limit: .seconds(1))) {
                try await fetcher.fetch(url, into: destination)
            }
        }
    }

    @Test func unanswered_connection_times_out_in_the_connect_phase() async throws {
        var policy = Fixtures.quickPolicy
        policy.connectTimeout = .seconds(1)
        policy.attempts = 1
        try await withServer(policy: policy) { server, fetcher, destination, _ async throws in
            let url = "http://127.0.0.1:\(server.blackHolePort)/list"
            await #expect(throws: ListFetchError.timedOut(url: url, phase: .connect, limit: .seconds(1))) {
                try await fetcher.fetch(url, into: destination)
            }
        }
    }

    @Test func truncated_body_is_reported_as_truncated() async throws {
        var policy = Fixtures.quickPolicy
        policy.attempts = 1
        try await withServer(policy: policy) { server, fetcher, destination, _ async throws in
            let url = server.url("/truncated")
            await #expect(throws: ListFetchError.truncated(url: url, receivedBytes: 500)) {
                try await fetcher.fetch(url, into: destination)
            }
        }
    }

    @Test func chunked_body_over_the_cap_is_stopped_at_the_cap() async throws {
        try await withServer { server, fetcher, destination, sleeper async throws in
            let url = server.url("/big-chunked?bytes=3000000")
            await #expect(throws: ListFetchError.tooLarge(url: url, limitBytes: 1 << 20)) {
                try await fetcher.fetch(url, into: destination)
            }
            #expect(try #require(Scratch.bytes(destination)).count <= 1 << 20)
            #expect(sleeper.recorded.isEmpty)
        }
    }

    @Test func announced_body_over_the_cap_is_refused_before_download() async throws {
        try await withServer { server, fetcher, destination, _ async throws in
            let url = server.url("/big-length?bytes=2000000")
            await #expect(throws: ListFetchError.tooLarge(url: url, limitBytes: 1 << 20)) {
                try await fetcher.fetch(url, into: destination)
            }
            #expect(Scratch.bytes(destination)?.isEmpty == true)
        }
    }

    @Test func gzip_body_that_inflates_past_the_cap_is_stopped() async throws {
        try await withServer { server, fetcher, destination, _ async throws in
            let url = server.url("/gzip?bytes=5000000")
            await #expect(throws: ListFetchError.tooLarge(url: url, limitBytes: 1 << 20)) {
                try await fetcher.fetch(url, into: destination)
            }
            #expect(try #require(Scratch.bytes(destination)).count <= 1 << 20)
        }
    }

    @Test func body_exactly_at_the_cap_is_accepted() async throws {
        try await withServer { server, fetcher, destination, _ async throws in
            let result = try await fetcher.fetch(server.url("/big-chunked?bytes=\(1 << 20)"), into: destination)
            #expect(result.bytesWritten == 1 << 20)
        }
    }

    @Test func undecodable_gzip_is_reported() async throws {
        try await withServer { server, fetcher, destination, _ async throws in
            let error = await #expect(throws: ListFetchError.self) {
                try await fetcher.fetch(server.url("/bad-gzip"), into: destination)
            }
            #expect(error?.code == "bad-content-encoding")
        }
    }

    @Test func progress_reports_grow_and_end_at_the_full_size() async throws {
        try await withServer { server, fetcher, destination, _ async throws in
            let progress = ProgressLog()
            _ = try await fetcher.fetch(server.url("/slow?bytes=200000&pieces=8&delay_ms=60"), into: destination, progress: progress.handler)
            let reports = progress.all
            #expect(reports.count >= 2)
            #expect(zip(reports, reports.dropFirst()).allSatisfy { $0.receivedBytes < $1.receivedBytes })
            #expect(reports.last == FetchProgress(attempt: 1, receivedBytes: 200_000, expectedBytes: 200_000))
        }
    }

    @Test func cancelling_the_task_aborts_a_stalled_transfer() async throws {
        // Only the cancel may end this transfer: with the quick policy's 1 s stall limit a loaded
        // machine (a full parallel run) could time the stall out and retry before the cancel lands.
        var patient = Fixtures.quickPolicy
        patient.stallTimeout = .seconds(60)
        patient.totalTimeout = .seconds(120)
        try await withServer(policy: patient) { server, fetcher, destination, sleeper async throws in
            let url = server.url("/stall")
            let task = Task { try await fetcher.fetch(url, into: destination) }
            // Cancel once the server has the request, so the abort hits a running transfer.
            while try server.requests(to: "/stall").isEmpty { try await Task.sleep(for: .milliseconds(10)) }
            task.cancel()
            await #expect(throws: ListFetchError.cancelled(url: url)) { try await task.value }
            #expect(sleeper.recorded.isEmpty)
            #expect(try server.requests(to: "/stall").count == 1)
        }
    }

    @Test func refused_connection_is_retried_then_reported() async throws {
        let port = try closedPort()
        let sleeper = RecordingSleeper()
        let fetcher = ListFetcher(policy: Fixtures.quickPolicy, sleeper: sleeper.sleeper)
        let destination = Scratch.uniquePath("refused")
        defer { Scratch.remove(destination) }
        let error = await #expect(throws: ListFetchError.self) {
            try await fetcher.fetch("http://127.0.0.1:\(port)/list", into: destination)
        }
        #expect(error?.code == "connection-failed")
        #expect(sleeper.recorded.count == 2)
    }

    @Test func file_url_is_copied() async throws {
        let source = Scratch.uniquePath("source") + ".txt"
        try Data(Fixtures.goodList).write(to: URL(fileURLWithPath: source))
        defer { Scratch.remove(source) }
        let destination = Scratch.uniquePath("copy")
        defer { Scratch.remove(destination) }
        let result = try await ListFetcher(policy: Fixtures.quickPolicy).fetch("file://\(source)", into: destination)
        #expect(result.kind == .downloaded)
        #expect(result.httpStatus == nil)
        #expect(Scratch.bytes(destination) == Fixtures.goodList)
    }

    @Test func missing_file_url_is_file_not_found_without_retry() async throws {
        let sleeper = RecordingSleeper()
        let missing = Scratch.uniquePath("missing") + ".txt"
        let destination = Scratch.uniquePath("copy")
        defer { Scratch.remove(destination) }
        await #expect(throws: ListFetchError.fileNotFound(path: missing)) {
            try await ListFetcher(policy: Fixtures.quickPolicy, sleeper: sleeper.sleeper).fetch("file://\(missing)", into: destination)
        }
        #expect(sleeper.recorded.isEmpty)
    }

    @Test(arguments: ["ftp://example.org/list.txt", "gopher://example.org/", "example.org/list.txt", "://nothing", "scp://host/file"])
    func unsupported_urls_are_refused_before_any_transfer(url: String) async throws {
        let destination = Scratch.uniquePath("never")
        await #expect(throws: ListFetchError.unsupportedURL(url: url)) {
            try await ListFetcher(policy: Fixtures.quickPolicy).fetch(url, into: destination)
        }
        #expect(!FileManager.default.fileExists(atPath: destination))
    }

    /// A loopback port nobody listens on: bound, then closed.
    private func closedPort() throws -> Int {
        let fd = socket(AF_INET, Int32(SOCK_STREAM.rawValue), 0)
        defer { close(fd) }
        var address = sockaddr_in()
        address.sin_family = sa_family_t(AF_INET)
        address.sin_addr.s_addr = inet_addr("127.0.0.1")
        address.sin_port = 0
        var length = socklen_t(MemoryLayout<sockaddr_in>.size)
        let bound = withUnsafeMutablePointer(to: &address) { pointer in
            pointer.withMemoryRebound(to: sockaddr.self, capacity: 1) { raw in
                bind(fd, raw, length) == 0 && getsockname(fd, raw, &length) == 0
            }
        }
        try #require(bound)
        return Int(UInt16(bigEndian: address.sin_port))
    }
}
