@testable import ControlAPI
import Testing

/// The CLI's response parser, fed whole and one byte at a time.
struct HTTPResponseReaderTests {
    /// Feeds `text` in pieces of `step` bytes and collects status, body and whether it ended.
    private func read(_ text: String, step: Int, closeAtEnd: Bool = false) throws -> (status: Int?, body: String, ended: Bool) {
        var reader = HTTPResponseReader()
        let bytes = Array(text.utf8)
        var status: Int?
        var body: [UInt8] = []
        var ended = false
        func drain() throws {
            while let event = try reader.next() {
                switch event {
                case .head(let head): status = head.status
                case .body(let chunk): body += chunk
                case .end: ended = true
                }
            }
        }
        var offset = 0
        while offset < bytes.count {
            reader.feed(bytes[offset..<min(offset + step, bytes.count)])
            try drain()
            offset += step
        }
        if closeAtEnd, !ended {
            while let event = try reader.finish() {
                if case .body(let chunk) = event { body += chunk }
                if case .end = event { ended = true }
            }
        }
        return (status, String(decoding: body, as: UTF8.self), ended)
    }

    static let framings: [(String, String, String)] = [
        ("content-length", "HTTP/1.1 200 OK\r\nContent-Length: 11\r\nContent-Type: application/json\r\n\r\n{\"ok\":true}", "{\"ok\":true}"),
        ("chunked", "HTTP/1.1 200 OK\r\nTransfer-Encoding: chunked\r\n\r\n5\r\nhello\r\n6\r\n world\r\n0\r\n\r\n", "hello world"),
        ("chunked with extension and trailer", "HTTP/1.1 200 OK\r\ntransfer-encoding: chunked\r\n\r\n3;x=y\r\nabc\r\n0\r\nX-T: 1\r\n\r\n", "abc"),
        ("upper-case hex chunk size", "HTTP/1.1 200 OK\r\nTransfer-Encoding: chunked\r\n\r\nA\r\n0123456789\r\n0\r\n\r\n", "0123456789"),
        ("no body on 204", "HTTP/1.1 204 No Content\r\nContent-Length: 0\r\n\r\n", ""),
        ("empty content-length", "HTTP/1.1 404 Not Found\r\nContent-Length: 0\r\n\r\n", ""),
    ]

    @Test(arguments: framings, [1, 2, 7, 4096])
    func body_is_reassembled_whatever_the_read_sizes(framing: (String, String, String), step: Int) throws {
        let result = try read(framing.1, step: step)
        #expect(result.body == framing.2, "\(framing.0)")
        #expect(result.ended, "\(framing.0)")
        #expect(result.status != nil)
    }

    @Test func body_without_length_ends_when_the_connection_closes() throws {
        let result = try read("HTTP/1.1 200 OK\r\nContent-Type: text/plain\r\n\r\npartial body", step: 3, closeAtEnd: true)
        #expect(result.body == "partial body")
        #expect(result.ended)
    }

    @Test(arguments: [
        ("HTTP/1.1 2000 OK\r\n\r\n", "bad status line"),
        ("SMTP 220 hello\r\n\r\n", "bad status line"),
        ("HTTP/1.1 200 OK\r\nNoColonHere\r\n\r\n", "bad header line"),
        ("HTTP/1.1 200 OK\r\nContent-Length: 2\r\nContent-Length: 3\r\n\r\nab", "bad Content-Length"),
        ("HTTP/1.1 200 OK\r\nContent-Length: -1\r\n\r\n", "bad Content-Length"),
        ("HTTP/1.1 200 OK\r\nTransfer-Encoding: gzip\r\n\r\n", "not chunked"),
        ("HTTP/1.1 200 OK\r\nTransfer-Encoding: chunked\r\n\r\nzz\r\n", "bad chunk size"),
        ("HTTP/1.1 200 OK\r\nTransfer-Encoding: chunked\r\n\r\n2\r\nabXY", "not followed by CRLF"),
    ])
    func malformed_answers_are_refused_with_the_reason(text: String, reason: String) throws {
        #expect {
            _ = try read(text, step: 4096)
        } throws: { error in
            guard case .malformed(let detail) = error as? HTTPResponseReader.Failure else { return false }
            return detail.contains(reason)
        }
    }

    @Test func closed_mid_body_is_truncation() throws {
        var reader = HTTPResponseReader()
        reader.feed(Array("HTTP/1.1 200 OK\r\nContent-Length: 10\r\n\r\nabc".utf8))
        while try reader.next() != nil {}
        #expect(throws: HTTPResponseReader.Failure.truncated("7 body bytes missing")) { _ = try reader.finish() }
    }

    @Test func oversized_header_section_is_refused_before_it_is_complete() throws {
        var reader = HTTPResponseReader()
        reader.maxHeadBytes = 100
        reader.feed(Array(("HTTP/1.1 200 OK\r\nX: " + String(repeating: "a", count: 200)).utf8))
        #expect(throws: HTTPResponseReader.Failure.self) { _ = try reader.next() }
    }

    @Test func oversized_declared_body_is_refused() throws {
        var reader = HTTPResponseReader()
        reader.maxBodyBytes = 10
        reader.feed(Array("HTTP/1.1 200 OK\r\nContent-Length: 11\r\n\r\n".utf8))
        #expect(throws: HTTPResponseReader.Failure.tooLarge("Content-Length 11")) { _ = try reader.next() }
    }

    @Test func header_lookup_ignores_case_and_parameters() throws {
        var reader = HTTPResponseReader()
        reader.feed(Array("HTTP/1.1 200 OK\r\ncontent-TYPE: Application/X-NDJSON; charset=utf-8\r\nContent-Length: 0\r\n\r\n".utf8))
        guard case .head(let head) = try reader.next() else {
            Issue.record("no head")
            return
        }
        #expect(head.contentType == "application/x-ndjson")
        #expect(head.value(of: "CONTENT-LENGTH") == "0")
    }
}
