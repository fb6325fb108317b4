import Foundation
@testable import ListFetch
import Testing

/// SPEC §11: file:// sources are read by the helper without following links, and a member's
/// http(s) source may reach only public addresses.
@Suite("What a list source may read and reach")
struct SourceAccessTests {
    @Test func an_administrators_file_source_behind_a_symlinked_folder_is_refused() async throws {
        let folder = try Scratch.directory("lists-real")
        defer { Scratch.remove(folder) }
        try "tiktok.com\n".write(toFile: folder + "/list.txt", atomically: false, encoding: .utf8)
        let link = Scratch.uniquePath("lists-link")
        try FileManager.default.createSymbolicLink(atPath: link, withDestinationPath: folder)
        defer { Scratch.remove(link) }
        let destination = Scratch.uniquePath("copy")
        defer { Scratch.remove(destination) }
        let error = await #expect(throws: ListFetchError.self) {
            try await ListFetcher(policy: Fixtures.quickPolicy).fetch("file://\(link)/list.txt", into: destination)
        }
        #expect(error?.code == "source-refused")
        #expect(error?.description.contains("is a symbolic link") == true, "\(String(describing: error))")
        // The real path is read as before.
        _ = try await ListFetcher(policy: Fixtures.quickPolicy).fetch("file://\(folder)/list.txt", into: destination)
        #expect(Scratch.bytes(destination) == Array("tiktok.com\n".utf8))
    }

    @Test func a_device_is_not_read_as_a_list_file() async throws {
        let destination = Scratch.uniquePath("copy")
        defer { Scratch.remove(destination) }
        let error = await #expect(throws: ListFetchError.self) {
            try await ListFetcher(policy: Fixtures.quickPolicy).fetch("file:///dev/zero", into: destination)
        }
        #expect(error?.code == "source-refused", "\(String(describing: error))")
        #expect((try? FileManager.default.attributesOfItem(atPath: destination)[.size] as? Int) ?? 0 == 0, "nothing was copied")
    }

    @Test func a_members_file_outside_the_member_folders_is_refused_before_it_is_opened() {
        let member = SourceAccess(reader: .init(uid: 40031, gid: 100, groups: []), memberFolders: ["/srv/scrolloff-lists"])
        #expect(member.refusal(ofFile: "/srv/scrolloff-lists/kids.txt") == nil)
        #expect(member.refusal(ofFile: "/srv/scrolloff-lists-other/kids.txt") != nil, "a folder's name prefix is not the folder")
        #expect(member.refusal(ofFile: "/srv/scrolloff-lists/../../etc/shadow") != nil)
        #expect(member.refusal(ofFile: "/srv/scrolloff-lists") != nil, "the folder itself is no file in it")
        #expect(member.refusal(ofFile: "/etc/shadow")?.contains("sudo scrolloff lists add file:///etc/shadow") == true)
        #expect(SourceAccess.administrator.refusal(ofFile: "/etc/shadow") == nil)
    }

    @Test(arguments: [
        ("127.0.0.1", "loopback"), ("127.8.9.10", "loopback"), ("10.1.2.3", "private"), ("172.16.0.1", "private"),
        ("192.168.1.1", "private"), ("100.64.0.1", "shared"), ("169.254.169.254", "link-local"), ("224.0.0.251", "multicast"),
        ("0.0.0.0", "unspecified"), ("255.255.255.255", "broadcast"), ("::1", "loopback"), ("::", "unspecified"),
        ("fe80::1", "link-local"), ("ff02::fb", "multicast"), ("fd12:3456::1", "unique local"), ("::ffff:127.0.0.1", "loopback"),
        ("64:ff9b::a9fe:a9fe", "link-local"),
    ])
    func addresses_that_are_not_public_are_refused_and_named(address: String, kind: String) throws {
        let bytes = try #require(IPAddressBytes.parse(address))
        let rule = AddressRule(allowed: [], own: [])
        #expect(rule.refusal(of: bytes)?.contains(kind) == true, "\(address): \(String(describing: rule.refusal(of: bytes)))")
    }

    @Test(arguments: ["93.184.216.34", "1.1.1.1", "172.32.0.1", "2606:2800:220:1::1", "2001:4860:4860::8888"])
    func public_addresses_are_allowed(address: String) throws {
        #expect(AddressRule(allowed: [], own: []).refusal(of: try #require(IPAddressBytes.parse(address))) == nil)
    }

    @Test func the_helpers_own_addresses_and_allowed_networks() throws {
        let own = try #require(IPAddressBytes.parse("203.0.113.7"))
        let rule = AddressRule(allowed: [try #require(AddressNetwork("192.168.1.0/24")), try #require(AddressNetwork("::1"))], own: [own])
        #expect(rule.refusal(of: own)?.contains("this machine's own") == true)
        #expect(rule.refusal(of: try #require(IPAddressBytes.parse("192.168.1.77"))) == nil)
        #expect(rule.refusal(of: try #require(IPAddressBytes.parse("::ffff:192.168.1.77"))) == nil, "a mapped address is its IPv4 address")
        #expect(rule.refusal(of: try #require(IPAddressBytes.parse("192.168.2.1"))) != nil)
        #expect(rule.refusal(of: try #require(IPAddressBytes.parse("::1"))) == nil)
        for bad in ["", "example.org", "10.0.0.0/33", "::/129", "1.2.3.4/", "1.2.3.4/-1", "1.2.3"] {
            #expect(AddressNetwork(bad) == nil, "\(bad)")
        }
    }
}
