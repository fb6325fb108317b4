import Config
import Sinkhole
import Testing

/// `[web] listen` takes a list like `[dns] listen` (a router wants the page on
/// its LAN address and on loopback); one string still works, and "" or [] turn the page off.
@Suite("[web] listen: one address or a list")
struct WebListenListTests {
    @Test func a_list_of_addresses_is_read_and_one_string_still_works() throws {
        let two = try parse("[web]\nlisten = [\"192.168.1.2:5381\", \"127.0.0.1:5381\"]")
        #expect(two.webListenAddresses.map(\.description) == ["192.168.1.2:5381", "127.0.0.1:5381"])
        #expect(two.webListenRequired)
        let one = try parse("[web]\nlisten = \"0.0.0.0:8080\"")
        #expect(one.webListenAddresses.map(\.description) == ["0.0.0.0:8080"])
        #expect(try parse("[web]\nlisten = []").webListenAddresses.isEmpty)
        #expect(try parse("[web]\nlisten = \"\"").webListenAddresses.isEmpty)
    }

    @Test func a_bad_or_repeated_address_in_the_list_is_reported_on_its_item() {
        let bad = problems("[web]\nlisten = [\"127.0.0.1:5381\", \"lan:80\"]")
        #expect(bad.contains { $0.key == "web.listen[2]" }, "\(bad)")
        let twice = problems("[web]\nlisten = [\"127.0.0.1:5381\", \"127.0.0.1:5381\"]")
        #expect(twice.contains { $0.key == "web.listen[2]" }, "\(twice)")
        let wrong = problems("[web]\nlisten = 5381")
        #expect(wrong.contains { $0.key == "web.listen" }, "\(wrong)")
    }
}
