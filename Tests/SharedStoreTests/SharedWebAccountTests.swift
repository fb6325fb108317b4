@testable import Engine
import Foundation
#if canImport(Glibc)
import Glibc
#endif
@testable import HouseholdPage
import Logging
import NIOPosix
import PostgresStore
import ServiceLifecycle
import Sinkhole
import Store
import Synchronization
import Testing
import TestSupport

/// Two helpers of one household (docs/operations.md): the household page's owners, sessions and sign-in waits are the household's, not a
/// helper's: an owner signs in on one helper's page and is signed in on the other's, a password
/// set through one helper works on both, and wrong passwords through either count against one wait.
@Suite(.serialized) struct SharedWebAccountTests {
    /// The user these tests run as: an owner must be a Unix user (`SystemGroups.user(named:)`).
    static let owner: String = {
        guard let entry = getpwuid(getuid()), let name = entry.pointee.pw_name else { return "root" }
        return String(cString: name)
    }()

    static let password = "a-long-household-password"

    @Test func an_owner_signed_in_on_one_helpers_page_is_signed_in_on_the_others_and_signing_out_there_ends_it_on_both() async throws {
        let db = try TestPostgres()
        defer { db.stop() }
        let clock = HouseholdClock()
        let a = try await SharedFixture.node("a", on: db, clock: clock, listening: false)
        let b = try await SharedFixture.node("b", on: db, clock: clock, listening: false)
        // Two state folders, neither holding a password file: the password is in the database only.
        let folders = (0..<2).map { _ in FileManager.default.temporaryDirectory.appendingPathComponent("scrolloff-words-web-\(UUID().uuidString.prefix(8))").path }
        defer { for f in folders { try? FileManager.default.removeItem(atPath: f) } }
        try OwnerPasswords(stateDirectory: folders[0], shared: a.store).set(name: Self.owner, password: Self.password)
        #expect(!FileManager.default.fileExists(atPath: folders[0] + "/" + OwnerPasswords.fileName))

        try await Self.withPages([(a.engine, a.store, folders[0]), (b.engine, b.store, folders[1])]) { ports in
            // Signed in through A's page.
            let signInPage = try Self.http(ports[0], "GET", "/signin")
            let planted = try #require(signInPage.cookie, "\(signInPage.head)")
            let csrf = try #require(signInPage.csrf)
            let form = "csrf=\(csrf)&name=\(Self.owner)&password=\(Self.password)"
            let signedIn = try Self.http(ports[0], "POST", "/signin", cookie: planted, body: form)
            try #require(signedIn.status == 303 && signedIn.head.lowercased().contains("location: /owner"), "\(signedIn.head)\n\(signedIn.body)")
            let session = try #require(signedIn.cookie)
            try #require(session != planted)

            // B's page knows the session: the owner's page, not the sign-in form.
            let onB = try Self.http(ports[1], "GET", "/owner", cookie: session)
            try #require(onB.status == 200 && onB.body.contains("Signed in as \(Self.owner)"), "\(onB.head)")
            // The id planted before the sign-in is worth nothing on either page.
            try #require(try Self.http(ports[1], "GET", "/owner", cookie: planted).status == 303)

            // Signed out through B: A's page no longer knows the session.
            let token = try #require(onB.csrf)
            let out = try Self.http(ports[1], "POST", "/signout", cookie: session, body: "csrf=\(token)")
            try #require(out.status == 303, "\(out.head)")
            let onA = try Self.http(ports[0], "GET", "/owner", cookie: session)
            try #require(onA.status == 303 && onA.head.lowercased().contains("location: /signin"), "\(onA.head)")
        }
    }

    @Test func a_password_set_through_one_helper_works_on_the_other_and_a_file_password_is_not_the_households() throws {
        let db = try TestPostgres()
        defer { db.stop() }
        let a = try PostgresStateStore(location: db.location, node: "a")
        let b = try PostgresStateStore(location: db.location, node: "b")
        let folder = FileManager.default.temporaryDirectory.appendingPathComponent("scrolloff-words-pw-\(UUID().uuidString.prefix(8))").path
        defer { try? FileManager.default.removeItem(atPath: folder) }
        try OwnerPasswords(stateDirectory: folder, shared: a).set(name: "alex", password: Self.password)
        let onB = OwnerPasswords(stateDirectory: folder, shared: b)
        #expect(onB.verify(name: "alex", password: Self.password))
        #expect(onB.names() == ["alex"])
        // Stored as on SQLite: salted scrypt with its parameters, never the password.
        let record = try #require(try b.ownerPasswordRecord(name: "alex"))
        #expect(record.hasPrefix("scrypt$32768$8$1$") && !record.contains("household"))
        // Replaced through B, the old one no longer works through A.
        try onB.set(name: "alex", password: "another long password")
        #expect(!OwnerPasswords(stateDirectory: folder, shared: a).verify(name: "alex", password: Self.password))
        #expect(OwnerPasswords(stateDirectory: folder, shared: a).verify(name: "alex", password: "another long password"))
        // A password in a helper's file is not the household's once the database keeps them.
        try OwnerPasswords(stateDirectory: folder).set(name: "sam", password: Self.password)
        #expect(!onB.verify(name: "sam", password: Self.password))
    }

    @Test func wrong_passwords_through_either_helper_count_against_one_wait_and_the_right_one_ends_it_on_both() async throws {
        let db = try TestPostgres()
        defer { db.stop() }
        let a = try PostgresStateStore(location: db.location, node: "a")
        let b = try PostgresStateStore(location: db.location, node: "b")
        let policy = SignInBackoff.Policy(freeTries: 3, firstDelay: .seconds(60), maximumDelay: .seconds(300))
        let onA = SignInBackoff(policy: policy, shared: a), onB = SignInBackoff(policy: policy, shared: b)
        // Three free tries, spread over both helpers.
        #expect(await onA.begin("alex", owner: true) == nil)
        #expect(await onB.begin("alex", owner: true) == nil)
        #expect(await onA.begin("alex", owner: true) == nil)
        // The fourth waits, whichever helper it goes to.
        let wait = try #require(await onB.begin("alex", owner: true))
        #expect(wait.failures == 3 && (59...60).contains(wait.seconds), "\(wait)")
        #expect(await onA.begin("alex", owner: true) != nil)
        // Another name is not held up by alex's wait.
        #expect(await onA.begin("sam", owner: false) == nil)
        // The right password through A ends the wait on B too.
        await onA.succeeded("alex")
        #expect(await onB.begin("alex", owner: true) == nil)
    }

    @Test func a_flash_line_and_an_exercise_started_on_one_page_are_seen_once_on_the_other() async throws {
        let db = try TestPostgres()
        defer { db.stop() }
        let a = WebSessions(shared: try PostgresStateStore(location: db.location, node: "a"))
        let b = WebSessions(shared: try PostgresStateStore(location: db.location, node: "b"))
        let session = await a.create()
        #expect(await b.find(session.id)?.csrf == session.csrf)
        await a.setFlash(session.id, "Blocked tiktok.")
        #expect(await b.takeFlash(session.id) == "Blocked tiktok.")
        #expect(await a.takeFlash(session.id) == nil, "a flash line is shown once, on whichever page comes next")
        await a.startExercise(session.id)
        #expect(await b.finishExercise(session.id, lasting: .seconds(60)) == false, "not yet a minute")
        #expect(await a.finishExercise(session.id, lasting: .zero) == false, "the start was used up by the other page")
        #expect(await b.count == 1)
    }

    // MARK: Pages and a client

    /// Serves one household page per (engine, store, state folder), each on a port the kernel
    /// picks, and runs `body` with the ports on a thread of its own (blocking sockets). On that
    /// thread an `#expect` is not the test's; `body` checks with `#require`, whose error ends it and
    /// is thrown here again as the test's.
    static func withPages(_ nodes: [(HelperEngine, PostgresStateStore, String)], _ body: @escaping @Sendable ([Int]) throws -> Void) async throws {
        let logger = Logger(label: "test")
        let ports = Mutex<[Int: Int]>([:])
        var services: [HouseholdWebService] = []
        for (i, (engine, store, folder)) in nodes.enumerated() {
            let web = HouseholdWeb(engine: engine, authorizer: GroupMembershipAuthorizer(),
                                   passwords: OwnerPasswords(stateDirectory: folder, shared: store),
                                   signIns: SignInBackoff(shared: store), sessions: store, logger: logger)
            services.append(HouseholdWebService(listen: HostPort(host: "127.0.0.1", port: 0), required: true, web: web,
                                                group: MultiThreadedEventLoopGroup.singleton, logger: logger, announce: { line in
                                                    let port = line.split(separator: ":").last.flatMap { Int($0) }
                                                    ports.withLock { $0[i] = port }
                                                }))
        }
        let group = ServiceGroup(services: services, logger: logger)
        let running = Task { try await group.run() }
        defer { running.cancel() }
        for _ in 0..<400 where ports.withLock({ $0.count }) < nodes.count { try await Task.sleep(for: .milliseconds(25)) }
        let bound = ports.withLock { p in nodes.indices.compactMap { p[$0] } }
        try #require(bound.count == nodes.count, "the pages did not start")
        // On a thread of its own (the checks block), in this task: their issues count for the test.
        let failure: (any Error)? = await onOwnThread { () -> (any Error)? in
            do { try body(bound); return nil } catch { return error }
        }
        await group.triggerGracefulShutdown()
        try await running.value
        if let failure { throw failure }
    }

    struct Reply {
        var status: Int
        var head: String
        var body: String
        /// The session id the reply sets, if any.
        var cookie: String? {
            head.split(separator: "\r\n").first { $0.lowercased().hasPrefix("set-cookie: \(WebSessions.cookieName)=") }
                .flatMap { $0.split(separator: "=", maxSplits: 1).last?.split(separator: ";").first.map(String.init) }
        }
        /// The CSRF token of the page's forms.
        var csrf: String? {
            guard let range = body.range(of: #"name="csrf" value=""#) else { return nil }
            return String(body[range.upperBound...].prefix { $0 != "\"" })
        }
    }

    /// One HTTP/1.1 request on a new connection, read to its end (`Connection: close`).
    static func http(_ port: Int, _ method: String, _ path: String, cookie: String? = nil, body: String = "") throws -> Reply {
        let fd = connectLoopbackTCP(port: port)
        guard fd >= 0 else { throw TestPostgres.Failed(description: "cannot connect to the page on port \(port)") }
        defer { close(fd) }
        var request = "\(method) \(path) HTTP/1.1\r\nHost: 127.0.0.1:\(port)\r\nConnection: close\r\n"
        if let cookie { request += "Cookie: \(WebSessions.cookieName)=\(cookie)\r\n" }
        if method == "POST" { request += "Content-Type: application/x-www-form-urlencoded\r\nContent-Length: \(body.utf8.count)\r\n" }
        request += "\r\n" + body
        let bytes = Array(request.utf8)
        guard send(fd, bytes, bytes.count, 0) == bytes.count else { throw TestPostgres.Failed(description: "cannot send to the page") }
        var received: [UInt8] = []
        var buffer = [UInt8](repeating: 0, count: 16384)
        while true {
            let n = recv(fd, &buffer, buffer.count, 0)
            if n <= 0 { break }
            received += buffer.prefix(n)
        }
        let text = String(decoding: received, as: UTF8.self)
        let parts = text.components(separatedBy: "\r\n\r\n")
        let head = parts.first ?? ""
        let status = head.split(separator: " ").dropFirst().first.flatMap { Int($0) } ?? 0
        return Reply(status: status, head: head, body: parts.dropFirst().joined(separator: "\r\n\r\n"))
    }
}
