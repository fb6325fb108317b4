import Foundation
@testable import Helper
import Logging
import NIOPosix
import ServiceLifecycle
import Sinkhole
import Testing

/// The household page's listener inside the helper's service group (SPEC §9a), and the owners'
/// password file.
@Suite("Household page service")
struct HouseholdWebServiceTests {
    /// A TCP port on 127.0.0.1 held by this test until `close`.
    static func holdPort() throws -> (port: Int, fd: Int32) {
        let fd = socket(AF_INET, Int32(SOCK_STREAM.rawValue), 0)
        var address = sockaddr_in()
        address.sin_family = sa_family_t(AF_INET)
        address.sin_addr.s_addr = inet_addr("127.0.0.1")
        var length = socklen_t(MemoryLayout<sockaddr_in>.size)
        let ok = withUnsafeMutablePointer(to: &address) {
            $0.withMemoryRebound(to: sockaddr.self, capacity: 1) { pointer in
                bind(fd, pointer, length) == 0 && listen(fd, 8) == 0 && getsockname(fd, pointer, &length) == 0
            }
        }
        guard ok else { throw HelperStartError("cannot hold a port") }
        return (Int(UInt16(bigEndian: address.sin_port)), fd)
    }

    static func service(_ engine: HelperEngine, port: Int, required: Bool) -> HouseholdWebService {
        let logger = Logger(label: "test")
        let web = HouseholdWeb(engine: engine, authorizer: GroupMembershipAuthorizer(),
                               passwords: OwnerPasswords(stateDirectory: Fixture.temporaryDirectory()), logger: logger)
        return HouseholdWebService(listen: HostPort(host: "127.0.0.1", port: port), required: required, web: web,
                                   group: MultiThreadedEventLoopGroup.singleton, logger: logger, announce: { _ in })
    }

    @Test func the_default_address_in_use_turns_the_page_off_and_keeps_the_helper_running() async throws {
        let engine = try await Fixture.start(Fixture.temporaryDirectory(), TestTimeSource(wall: Fixture.noon))
        let held = try Self.holdPort()
        defer { close(held.fd) }
        let group = ServiceGroup(services: [Self.service(engine, port: held.port, required: false)], logger: Logger(label: "test"))
        let running = Task { try await group.run() }
        try await Task.sleep(for: .milliseconds(500))
        // Still a member of the group: it neither failed the start nor ended the helper.
        await group.triggerGracefulShutdown()
        try await running.value
    }

    @Test func an_address_the_configuration_names_in_use_stops_the_start_with_what_to_do() async throws {
        let engine = try await Fixture.start(Fixture.temporaryDirectory(), TestTimeSource(wall: Fixture.noon))
        let held = try Self.holdPort()
        defer { close(held.fd) }
        let group = ServiceGroup(services: [Self.service(engine, port: held.port, required: true)], logger: Logger(label: "test"))
        do {
            try await group.run()
            Issue.record("the group ran although the address was in use")
        } catch let error as HelperStartError {
            #expect(error.description.contains("127.0.0.1:\(held.port)") && error.description.contains("in use"))
            #expect(error.description.contains("--web-listen"))
        }
    }

    @Test func a_password_verifies_a_wrong_one_does_not_and_the_file_is_for_root_only() throws {
        let dir = Fixture.temporaryDirectory()
        let passwords = OwnerPasswords(stateDirectory: dir)
        try passwords.set(name: "alex", password: "long enough words")
        #expect(passwords.verify(name: "alex", password: "long enough words"))
        #expect(!passwords.verify(name: "alex", password: "long enough word"))
        #expect(!passwords.verify(name: "sam", password: "long enough words"))
        let mode = try FileManager.default.attributesOfItem(atPath: passwords.path)[.posixPermissions] as? Int
        #expect(mode == 0o600)
        let text = try String(contentsOfFile: passwords.path, encoding: .utf8)
        // Salted and slow: scrypt with its parameters, never the password itself.
        #expect(text.hasPrefix("alex:scrypt$32768$8$1$") && !text.contains("long enough"))
        #expect(throws: OwnerPasswordError.tooShort(OwnerPasswords.minimumLength)) { try passwords.set(name: "alex", password: "short") }
        #expect(throws: OwnerPasswordError.badName("a:b")) { try passwords.set(name: "a:b", password: "long enough words") }
    }
}

@Suite("Household page sessions")
struct WebSessionsTests {
    @Test func sessions_stay_within_their_bound_and_the_newest_survive() async {
        let sessions = WebSessions()
        let first = await sessions.create()
        var last = first
        for _ in 0..<(WebSessions.maximumCount + 100) { last = await sessions.create() }
        #expect(await sessions.count <= WebSessions.maximumCount)
        #expect(await sessions.find(last.id) != nil)
        #expect(await sessions.find(first.id) == nil)
    }

    @Test func signing_in_replaces_the_session_so_a_planted_id_is_worth_nothing() async {
        let sessions = WebSessions()
        let planted = await sessions.create()
        let signedIn = await sessions.signIn(replacing: planted.id, owner: OwnerIdentity(name: "alex", uid: 1000, gid: 1000))
        #expect(signedIn.id != planted.id && signedIn.csrf != planted.csrf)
        #expect(await sessions.find(planted.id) == nil)
        #expect(await sessions.find(signedIn.id)?.owner?.name == "alex")
    }

    @Test func tokens_compare_equal_only_when_identical() {
        let token = WebSessions.token()
        #expect(token.count == 64)
        #expect(WebSessions.same(token, token))
        #expect(!WebSessions.same(token, String(token.dropLast()) + "x"))
        #expect(!WebSessions.same("", ""))
    }
}
