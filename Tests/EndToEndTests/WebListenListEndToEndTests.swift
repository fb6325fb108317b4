import Foundation
import TestSupport
import Testing

/// `[web] listen` as a list serves the page on each address (a router's LAN
/// address and loopback), one page behind both.
@Suite struct WebListenListEndToEndTests {
    @Test func the_page_answers_on_every_address_of_the_listen_list() throws {
        let scratch = try Scratch()
        let config = try scratch.file("scrolloff.toml", "[web]\nlisten = [\"127.0.0.1:0\", \"127.0.0.2:0\"]\n")
        let child = try HelperLaunch(
            executable: Products.scrolloffDNS, upstreams: ["127.0.0.1:9"], stateDirectory: "\(scratch.path)/state",
            controlSocket: "\(scratch.path)/control.sock", config: config
        ).spawn(scratch: scratch, label: "words-weblist-\(UUID().uuidString)")
        for host in ["127.0.0.1", "127.0.0.2"] {
            let line = try child.waitForLine { $0.hasPrefix("listening web \(host):") }
            let port = try #require(line.split(separator: ":").last.map(String.init))
            let page = try runWithStatus("/usr/bin/curl", ["-s", "--max-time", "10", "-o", "/dev/null", "-w", "%{http_code}", "http://\(host):\(port)/"])
            #expect(page.output.hasSuffix("200"), "\(host): \(page)")
        }
    }
}
