import Foundation
import ListFetch
import ScrollOffCore
import Testing

/// The store end to end: real downloads, the test validator, files on disk.
@Suite("ListStore keeps the last good copy")
struct ListStoreTests {
    struct Harness {
        let server: ListServer
        let stateDirectory: String
        let clock: ManualClock
        let store: ListStore

        func copy(_ name: ListName) -> [UInt8]? { Scratch.bytes(store.copyPath(for: name)) }

        func cleanUp() {
            server.stop()
            Scratch.remove(stateDirectory)
        }
    }

    func withStore<T>(maxBadLines: Int = 2, _ body: (Harness) async throws -> T) async throws -> T {
        let server = try ListServer.start()
        let stateDirectory = try Scratch.directory("state")
        let clock = ManualClock()
        let store = ListStore(
            stateDirectory: stateDirectory,
            fetcher: ListFetcher(policy: Fixtures.quickPolicy, sleeper: RecordingSleeper().sleeper),
            validator: HostnameValidator(maxBadLines: maxBadLines).asValidator,
            clock: clock.reading
        )
        let harness = Harness(server: server, stateDirectory: stateDirectory, clock: clock, store: store)
        defer { harness.cleanUp() }
        return try await body(harness)
    }

    @Test func first_refresh_installs_the_copy_and_records_metadata() async throws {
        try await withStore { h async throws in
            let name = try ListName("ads")
            let report = await h.store.refresh(name, from: h.server.url("/etag"))
            #expect(report.outcome == .updated(entryCount: 3, sizeBytes: Int64(Fixtures.goodList.count)))
            #expect(h.copy(name) == Fixtures.goodList)
            let saved = try #require(try await h.store.metadata(for: name))
            #expect(saved == report.metadata)
            #expect(saved.url == h.server.url("/etag"))
            #expect(saved.validators == ConditionalValidators(etag: "\"list-v1\"", lastModified: "Wed, 21 Oct 2026 07:28:00 GMT"))
            #expect(saved.lastAttempt == h.clock.now)
            #expect(saved.lastSuccess == h.clock.now)
            #expect(saved.lastChanged == h.clock.now)
            #expect(saved.lastError == nil)
            #expect(saved.entryCount == 3)
            #expect(saved.sizeBytes == Int64(Fixtures.goodList.count))
            // Only the copy and its metadata remain: no temporary file is left behind.
            #expect(try FileManager.default.contentsOfDirectory(atPath: h.store.listsDirectory).sorted() == ["ads.json", "ads.list"])
        }
    }

    @Test func refresh_with_304_keeps_the_copy_and_counts_as_success() async throws {
        try await withStore { h async throws in
            let name = try ListName("ads")
            _ = await h.store.refresh(name, from: h.server.url("/etag"))
            let installed = h.clock.now
            h.clock.advance(.hours(24))
            let report = await h.store.refresh(name, from: h.server.url("/etag"))
            #expect(report.outcome == .unchanged)
            #expect(try h.server.requests(to: "/etag").last?.headers["if-none-match"] == "\"list-v1\"")
            #expect(h.copy(name) == Fixtures.goodList)
            #expect(report.metadata.lastSuccess == h.clock.now)
            #expect(report.metadata.lastChanged == installed)
            #expect(report.metadata.entryCount == 3)
        }
    }

    @Test func changed_list_replaces_the_copy() async throws {
        try await withStore { h async throws in
            let name = try ListName("seq")
            _ = await h.store.refresh(name, from: h.server.url("/seq/a"))
            #expect(h.copy(name) == Array("v1-host0.example.com\nv1-host1.example.com\n".utf8))
            h.clock.advance(.hours(24))
            let report = await h.store.refresh(name, from: h.server.url("/seq/a"))
            #expect(report.outcome == .updated(entryCount: 3, sizeBytes: 63))
            #expect(h.copy(name) == Array("v2-host0.example.com\nv2-host1.example.com\nv2-host2.example.com\n".utf8))
            #expect(report.metadata.validators.etag == "\"seq-2\"")
            #expect(report.metadata.lastChanged == h.clock.now)
        }
    }

    @Test func bad_lines_within_the_budget_are_accepted_and_recorded() async throws {
        try await withStore(maxBadLines: 2) { h async throws in
            let name = try ListName("some-bad")
            let report = await h.store.refresh(name, from: h.server.url("/some-bad"))
            #expect(report.outcome == .updated(entryCount: 3, sizeBytes: 66))
            #expect(report.metadata.badLineCount == 2)
            #expect(report.metadata.badLines.map(\.lineNumber) == [2, 4])
            #expect(report.metadata.badLines.map(\.text) == ["not a host", "<html>"])
        }
    }

    /// Every way a refresh can fail, after a good copy was installed: the copy stays byte for byte,
    /// the last success stays, and the metadata says why.
    @Test(arguments: [
        ("/status/404", "http-404"),
        ("/status/500", "http-500"),
        ("/stall", "timeout-stalled"),
        ("/truncated", "truncated"),
        ("/big-chunked?bytes=3000000", "too-large"),
        ("/big-length?bytes=3000000", "too-large"),
        ("/gzip?bytes=5000000", "too-large"),
        ("/bad-gzip", "bad-content-encoding"),
        ("/loop", "too-many-redirects"),
        ("/redirect-file", "redirect-refused"),
        ("/garbage", "rejected"),
        ("/empty", "empty-list"),
        ("/comments", "empty-list"),
    ])
    func failed_refresh_keeps_serving_the_old_copy(path: String, expectedCode: String) async throws {
        try await withStore { h async throws in
            let name = try ListName("ads")
            let good = await h.store.refresh(name, from: h.server.url("/etag"))
            let goodInstant = h.clock.now
            #expect(good.outcome == .updated(entryCount: 3, sizeBytes: Int64(Fixtures.goodList.count)))
            h.clock.advance(.hours(24))

            let report = await h.store.refresh(name, from: h.server.url(path))
            guard case .failed(let error) = report.outcome else {
                Issue.record("expected a failure from \(path), got \(report.outcome)")
                return
            }
            #expect(error.code == expectedCode)
            #expect(h.copy(name) == Fixtures.goodList)
            let saved = try #require(try await h.store.metadata(for: name))
            #expect(saved.lastError == error.description)
            #expect(saved.lastErrorCode == expectedCode)
            #expect(saved.lastAttempt == h.clock.now)
            #expect(saved.lastSuccess == goodInstant)
            #expect(saved.lastChanged == goodInstant)
            #expect(saved.consecutiveFailures == 1)
            #expect(saved.entryCount == 3)
            #expect(saved.url == h.server.url(path))
            #expect(try FileManager.default.contentsOfDirectory(atPath: h.store.listsDirectory).sorted() == ["ads.json", "ads.list"])
        }
    }

    @Test func missing_file_url_keeps_serving_the_old_copy() async throws {
        try await withStore { h async throws in
            let name = try ListName("local")
            let source = Scratch.uniquePath("local") + ".txt"
            try Data(Fixtures.goodList).write(to: URL(fileURLWithPath: source))
            let first = await h.store.refresh(name, from: "file://\(source)")
            #expect(first.outcome == .updated(entryCount: 3, sizeBytes: Int64(Fixtures.goodList.count)))
            Scratch.remove(source)
            h.clock.advance(.hours(1))
            let report = await h.store.refresh(name, from: "file://\(source)")
            #expect(report.outcome == .failed(.fileNotFound(path: source)))
            #expect(h.copy(name) == Fixtures.goodList)
            #expect(report.metadata.lastErrorCode == "file-not-found")
        }
    }

    @Test func garbage_rejection_names_the_validator_reason() async throws {
        try await withStore { h async throws in
            let name = try ListName("junk")
            let report = await h.store.refresh(name, from: h.server.url("/garbage"))
            #expect(report.outcome == .failed(.rejectedByValidation(
                name: "junk", reason: "8 lines are not hostnames (the limit is 2), the first at line 1")))
            #expect(h.copy(name) == nil)
            #expect(report.metadata.hasCopy == false)
            #expect(report.metadata.lastSuccess == nil)
        }
    }

    @Test func failures_count_up_and_a_success_resets_them() async throws {
        try await withStore { h async throws in
            let name = try ListName("ads")
            _ = await h.store.refresh(name, from: h.server.url("/status/404"))
            let second = await h.store.refresh(name, from: h.server.url("/status/404"))
            #expect(second.metadata.consecutiveFailures == 2)
            let healed = await h.store.refresh(name, from: h.server.url("/etag"))
            #expect(healed.metadata.consecutiveFailures == 0)
            #expect(healed.metadata.lastError == nil)
            #expect(healed.metadata.lastErrorCode == nil)
        }
    }

    @Test func new_url_drops_the_old_validators() async throws {
        try await withStore { h async throws in
            let name = try ListName("ads")
            _ = await h.store.refresh(name, from: h.server.url("/etag"))
            _ = await h.store.refresh(name, from: h.server.url("/redirect/0"))
            #expect(try h.server.requests(to: "/redirect/0").first?.headers["if-none-match"] == nil)
        }
    }

    @Test func lost_copy_is_fetched_unconditionally() async throws {
        try await withStore { h async throws in
            let name = try ListName("ads")
            _ = await h.store.refresh(name, from: h.server.url("/etag"))
            try FileManager.default.removeItem(atPath: h.store.copyPath(for: name))
            let report = await h.store.refresh(name, from: h.server.url("/etag"))
            #expect(report.outcome == .updated(entryCount: 3, sizeBytes: Int64(Fixtures.goodList.count)))
            #expect(try h.server.requests(to: "/etag").last?.headers["if-none-match"] == nil)
            #expect(h.copy(name) == Fixtures.goodList)
        }
    }

    @Test func concurrent_refreshes_of_one_list_share_one_download() async throws {
        try await withStore { h async throws in
            let name = try ListName("slow")
            let url = h.server.url("/slow?bytes=20000&pieces=5&delay_ms=60")
            async let first = h.store.refresh(name, from: url)
            async let second = h.store.refresh(name, from: url)
            let reports = await [first, second]
            #expect(reports[0] == reports[1])
            #expect(try h.server.requests(to: "/slow?bytes=20000&pieces=5&delay_ms=60").count == 1)
        }
    }

    @Test func leftover_temporary_files_of_a_crash_are_removed() async throws {
        try await withStore { h async throws in
            let name = try ListName("a")
            try FileManager.default.createDirectory(atPath: h.store.listsDirectory, withIntermediateDirectories: true)
            let own = h.store.listsDirectory + "/.a.Xy12Zq.part"
            let other = h.store.listsDirectory + "/.a.b.Xy12Zq.part"
            for path in [own, other] { _ = FileManager.default.createFile(atPath: path, contents: Data("half".utf8)) }
            _ = await h.store.refresh(name, from: h.server.url("/etag"))
            #expect(!FileManager.default.fileExists(atPath: own))
            #expect(FileManager.default.fileExists(atPath: other))
        }
    }

    @Test func metadata_is_read_back_by_a_new_store() async throws {
        try await withStore { h async throws in
            let a = try ListName("alpha"), b = try ListName("beta")
            _ = await h.store.refresh(a, from: h.server.url("/etag"))
            _ = await h.store.refresh(b, from: h.server.url("/status/404"))
            let reopened = ListStore(stateDirectory: h.stateDirectory, validator: HostnameValidator(maxBadLines: 0).asValidator, clock: h.clock.reading)
            let all = await reopened.allMetadata()
            #expect(all.map(\.name) == [a, b])
            #expect(all[0].entryCount == 3)
            #expect(all[1].lastErrorCode == "http-404")
            #expect(all[1].hasCopy == false)
        }
    }

    @Test func unreadable_record_is_listed_with_the_reason_and_rewritten_by_the_next_refresh() async throws {
        try await withStore { h async throws in
            let name = try ListName("ads")
            _ = await h.store.refresh(name, from: h.server.url("/etag"))
            try Data("{ not json".utf8).write(to: URL(fileURLWithPath: h.store.metadataPath(for: name)))
            let listed = try #require(await h.store.allMetadata().first)
            #expect(listed.name == name)
            #expect(listed.lastErrorCode == "local-file")
            #expect(listed.lastError?.contains(h.store.metadataPath(for: name)) == true)
            let report = await h.store.refresh(name, from: h.server.url("/etag"))
            #expect(report.outcome == .updated(entryCount: 3, sizeBytes: Int64(Fixtures.goodList.count)))
            #expect(try await h.store.metadata(for: name) == report.metadata)
        }
    }

    @Test func remove_deletes_the_copy_and_the_metadata() async throws {
        try await withStore { h async throws in
            let name = try ListName("ads")
            _ = await h.store.refresh(name, from: h.server.url("/etag"))
            try await h.store.remove(name)
            #expect(h.copy(name) == nil)
            #expect(try await h.store.metadata(for: name) == nil)
            #expect(await h.store.allMetadata().isEmpty)
        }
    }

    @Test(arguments: ["", "-ads", ".hidden", "a/b", "../escape", "has space", "ümlaut", String(repeating: "x", count: 65)])
    func unusable_list_names_are_refused(raw: String) {
        #expect(throws: ListFetchError.invalidListName(name: raw)) { try ListName(raw) }
    }

    @Test(arguments: [("Ads", "ads"), ("oisd-big", "oisd-big"), ("stevenblack_hosts.2", "stevenblack_hosts.2"), ("0", "0")])
    func usable_list_names_are_lowercased(raw: String, expected: String) throws {
        #expect(try ListName(raw).rawValue == expected)
    }
}

@Suite("ListStore cancellation")
struct ListStoreCancellationTests {
    @Test func cancelled_refresh_keeps_the_copy_and_the_record() async throws {
        let server = try ListServer.start()
        defer { server.stop() }
        let stateDirectory = try Scratch.directory("state")
        defer { Scratch.remove(stateDirectory) }
        let store = ListStore(
            stateDirectory: stateDirectory,
            fetcher: ListFetcher(policy: Fixtures.quickPolicy, sleeper: RecordingSleeper().sleeper),
            validator: HostnameValidator(maxBadLines: 0).asValidator,
            clock: ManualClock().reading
        )
        let name = try ListName("ads")
        let installed = await store.refresh(name, from: server.url("/etag"))
        let url = server.url("/stall")
        let task = Task { await store.refresh(name, from: url) }
        while try server.requests(to: "/stall").isEmpty { try await Task.sleep(for: .milliseconds(10)) }
        task.cancel()
        let report = await task.value
        #expect(report.outcome == .failed(.cancelled(url: url)))
        #expect(try await store.metadata(for: name) == installed.metadata)
        #expect(Scratch.bytes(store.copyPath(for: name)) == Fixtures.goodList)
        #expect(try FileManager.default.contentsOfDirectory(atPath: store.listsDirectory).sorted() == ["ads.json", "ads.list"])
    }
}
