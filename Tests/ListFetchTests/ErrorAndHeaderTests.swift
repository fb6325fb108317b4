@testable import ListFetch
import ScrollOffCore
import Testing

@Suite("Errors say what failed and whether to retry")
struct ListFetchErrorTests {
    static let url = "https://lists.example.org/ads.txt"

    @Test(arguments: [
        (ListFetchError.httpStatus(url: url, status: 500), true),
        (.httpStatus(url: url, status: 503), true),
        (.httpStatus(url: url, status: 429), true),
        (.httpStatus(url: url, status: 408), true),
        (.httpStatus(url: url, status: 404), false),
        (.httpStatus(url: url, status: 403), false),
        (.timedOut(url: url, phase: .stalled, limit: .seconds(30)), true),
        (.timedOut(url: url, phase: .connect, limit: .seconds(15)), true),
        (.truncated(url: url, receivedBytes: 10), true),
        (.hostNotFound(url: url, host: "lists.example.org"), true),
        (.connectionFailed(url: url, detail: "refused"), true),
        (.tooLarge(url: url, limitBytes: 1), false),
        (.tooManyRedirects(url: url, limit: 5), false),
        (.fileNotFound(path: "/nope"), false),
        (.tls(url: url, detail: "expired"), false),
        (.cancelled(url: url), false),
        (.rejectedByValidation(name: "ads", reason: "junk"), false),
    ])
    func retry_only_what_a_later_attempt_can_fix(error: ListFetchError, retryable: Bool) {
        #expect(error.isRetryable == retryable)
    }

    @Test func messages_name_the_url_and_the_next_step() {
        let notFound = ListFetchError.httpStatus(url: Self.url, status: 404).description
        #expect(notFound.contains(Self.url) && notFound.contains("404") && notFound.contains("add it with its new URL"))
        let tooLarge = ListFetchError.tooLarge(url: Self.url, limitBytes: 64 << 20).description
        #expect(tooLarge.contains("64 MiB"))
        let stalled = ListFetchError.timedOut(url: Self.url, phase: .stalled, limit: .seconds(30)).description
        #expect(stalled.contains("stalled") && stalled.contains("30.0 s"))
    }

    @Test(arguments: [(Int64(0), "0 bytes"), (1023, "1023 bytes"), (1024, "1 KiB"), (1536, "1.5 KiB"), (64 << 20, "64 MiB"), (5_767_168, "5.5 MiB"), (5_767_167, "5.4 MiB")])
    func byte_counts_read_in_binary_units(bytes: Int64, text: String) {
        #expect(ListFetchError.formatBytes(bytes) == text)
    }
}

@Suite("Response headers are captured safely")
struct CapturedHeadersTests {
    @Test func validators_come_from_the_final_response_only() {
        var headers = CapturedHeaders()
        for line in ["HTTP/1.1 302 Found\r\n", "ETag: \"redirect\"\r\n", "Location: /x\r\n", "\r\n",
                     "HTTP/1.1 200 OK\r\n", "etag:   \"final\"  \r\n", "Last-Modified: Wed, 21 Oct 2026 07:28:00 GMT\r\n", "\r\n"] {
            headers.consume(line: line)
        }
        #expect(headers.etag == "\"final\"")
        #expect(headers.lastModified == "Wed, 21 Oct 2026 07:28:00 GMT")
    }

    @Test(arguments: ["ETag: \"a\u{7}b\"\r\n", "ETag: \"caf\u{E9}\"\r\n", "ETag: \r\n", "ETag: \"\(String(repeating: "x", count: 1100))\"\r\n"])
    func unsafe_or_empty_validators_are_ignored(line: String) {
        var headers = CapturedHeaders()
        headers.consume(line: line)
        #expect(headers.etag == nil)
    }

    @Test(arguments: [("Retry-After: 120\r\n", Int64?.some(120)), ("Retry-After: Wed, 21 Oct 2026 07:28:00 GMT\r\n", nil)])
    func retry_after_is_read_in_seconds_form_only(line: String, seconds: Int64?) {
        var headers = CapturedHeaders()
        headers.consume(line: line)
        #expect(headers.retryAfterSeconds == seconds)
    }

    @Test(arguments: [
        ("https://lists.example.org/ads.txt", "lists.example.org"),
        ("http://user:pw@10.0.0.1:8080/x", "10.0.0.1"),
        ("https://[2001:db8::1]:443/list", "2001:db8::1"),
        ("https://user:pw@Lists.Example.org/x", "lists.example.org"),
        ("https://lists.example.org:8443?a=@other.example/", "lists.example.org"),
        // Two @ in the authority: libcurl will not fetch it, so no host is allowed for it either
        // (a parser of its own used to allow "lists.example.org" here).
        ("https://user:p@ss@Lists.Example.org/x", nil),
    ])
    func host_is_taken_from_the_authority(url: String, host: String?) {
        #expect(ListSourceURL(url)?.host == host)
        #expect(ListFetcher.host(of: url) == host)
    }

    @Test(arguments: [("file:///var/lib/a%20b.txt", "/var/lib/a b.txt"), ("file://localhost/etc/hosts", "/etc/hosts")])
    func file_url_paths_are_decoded(url: String, path: String) {
        #expect(CurlTransfer.filePath(of: url) == path)
    }
}

@Suite("List hosts for the always-allow list")
struct ListHostTests {
    @Test(arguments: [
        ("https://Lists.Example.org/ads.txt", String?.some("lists.example.org")),
        ("http://127.0.0.1:8080/hosts", "127.0.0.1"),
        ("file:///var/lib/scrolloff/local.list", nil),
        ("not a url", nil),
        ("https://user@www.Example.org:8443/list", "www.example.org"),
        ("https://[2001:DB8::1]/list", "2001:db8::1"),
    ])
    func list_url_host_is_lowercased_and_file_urls_have_none(url: String, host: String?) {
        #expect(ListFetcher.host(of: url) == host)
    }
}
