import ControlAPI
@testable import ControlTransport
import NIOHTTP1
import Testing

/// The CLI's HTTP: SwiftNIO's encoder and decoder as `HTTPCodec` wires them, fed whole and in
/// small pieces as a socket may deliver them.
struct HTTPCodecTests {
    /// Feeds `text` in pieces of `step` bytes and collects status, body and whether it ended.
    private func read(_ text: String, step: Int, closeAtEnd: Bool = false, method: String = "GET") throws -> (status: Int?, body: String, ended: Bool) {
        let codec = try HTTPCodec()
        _ = try codec.encode(method: method, target: "/v1/health", headers: [("Host", "scrolloff")], body: nil)
        let bytes = Array(text.utf8)
        var status: Int?
        var body: [UInt8] = []
        var ended = false
        func take(_ parts: [HTTPCodec.Part]) {
            for part in parts {
                switch part {
                case .head(let code): status = code
                case .body(let chunk): body += chunk
                case .end: ended = true
                }
            }
        }
        var offset = 0
        while offset < bytes.count {
            take(try codec.feed(Array(bytes[offset..<min(offset + step, bytes.count)])))
            offset += step
        }
        if closeAtEnd { take(try codec.finish()) }
        return (status, String(decoding: body, as: UTF8.self), ended)
    }

    static let framings: [(String, String, String)] = [
        ("content-length", "HTTP/1.1 200 OK\r\nContent-Length: 11\r\nContent-Type: application/json\r\n\r\n{\"ok\":true}", "{\"ok\":true}"),
        ("chunked", "HTTP/1.1 200 OK\r\nTransfer-Encoding: chunked\r\n\r\n5\r\nhello\r\n6\r\n world\r\n0\r\n\r\n", "hello world"),
        ("chunked with extension and trailer", "HTTP/1.1 200 OK\r\ntransfer-encoding: chunked\r\n\r\n3;x=y\r\nabc\r\n0\r\nX-T: 1\r\n\r\n", "abc"),
        ("interim 100 before the answer", "HTTP/1.1 100 Continue\r\n\r\nHTTP/1.1 201 Created\r\nContent-Length: 2\r\n\r\n{}", "{}"),
        ("no body on 204", "HTTP/1.1 204 No Content\r\nContent-Length: 0\r\n\r\n", ""),
    ]

    @Test(arguments: framings, [1, 7, 4096])
    func body_is_reassembled_whatever_the_read_sizes(framing: (String, String, String), step: Int) throws {
        let result = try read(framing.1, step: step)
        #expect(result.body == framing.2, "\(framing.0)")
        #expect(result.ended, "\(framing.0)")
        #expect(result.status != nil && result.status! >= 200, "\(framing.0): interim answers are skipped")
    }

    @Test func answer_to_head_has_no_body_whatever_its_length_says() throws {
        let result = try read("HTTP/1.1 200 OK\r\nContent-Length: 50\r\n\r\n", step: 4096, method: "HEAD")
        #expect(result.ended)
        #expect(result.body.isEmpty)
    }

    @Test func body_without_length_ends_when_the_connection_closes() throws {
        let result = try read("HTTP/1.1 200 OK\r\nContent-Type: text/plain\r\n\r\npartial body", step: 3, closeAtEnd: true)
        #expect(result.body == "partial body")
        #expect(result.ended)
    }

    @Test(arguments: [
        "HTTP/1.1 2000 OK\r\n\r\n",
        "SMTP 220 hello\r\n\r\n",
        "HTTP/1.1 200 OK\r\nContent-Length: 2\r\nContent-Length: 3\r\n\r\nab",
        "HTTP/1.1 200 OK\r\nContent-Length: -1\r\n\r\n",
        "HTTP/1.1 200 OK\r\nTransfer-Encoding: chunked\r\n\r\nzz\r\n",
    ])
    func malformed_answers_are_refused(text: String) throws {
        #expect(throws: HTTPParserError.self) { _ = try read(text, step: 4096) }
    }

    @Test func closed_mid_body_is_an_error_not_a_short_answer() throws {
        #expect(throws: HTTPParserError.self) {
            _ = try read("HTTP/1.1 200 OK\r\nContent-Length: 10\r\n\r\nabc", step: 4096, closeAtEnd: true)
        }
    }
}
