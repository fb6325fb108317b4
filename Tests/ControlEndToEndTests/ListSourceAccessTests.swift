#if canImport(Glibc)
import ControlServer
import Engine
import Glibc
#endif
import ControlAPI
import Foundation
import Helper
import ListFetch
import Logging
import TestSupport
import Testing

extension ControlEndToEnd {
/// SPEC §11: who may add which list sources. A group member (a real uid in the group the
/// authorizer names, through `setpriv`) may not make the root helper read a file they cannot read
/// or fetch from this machine or its networks; no line of what was refused reaches the answer,
/// `lists list` or the log.
@Suite
struct ListSourceAccessTests {
    /// A uid with no account, in group `users` (gid 100) as its primary group: a member of the
    /// group the authorizer below names, as SO_PEERCRED reports them.
    static let memberUID: UInt32 = 40031
    static let memberGID: UInt32 = 100

    static func server(rules: ListSourceRules = ListSourceRules(), log: CapturedLog) async throws -> EngineServer {
        try await EngineServer(socketMode: 0o666, directoryMode: 0o755, authorizer: GroupMembershipAuthorizer(groupName: "users"),
                               lists: ListsConfiguration(sourceRules: rules), logger: log.logger(label: "lists-access", level: .debug))
    }

    /// The CLI as the member, in UTC, against `server`.
    static func member(_ arguments: [String], _ server: EngineServer) async throws -> ProcessResult {
        try await run("/usr/bin/setpriv",
                      ["--reuid=\(memberUID)", "--regid=\(memberGID)", "--clear-groups", scrolloffBinary] + arguments + ["--socket", server.socketPath],
                      environment: ["PATH": "/usr/bin:/bin", "NO_COLOR": "1", "TZ": "UTC", "HOME": "/tmp"])
    }

    /// Every text a person or an administrator could read after the attempt.
    static func everythingSaid(_ results: [ProcessResult], _ server: EngineServer, _ log: CapturedLog) async throws -> String {
        let listed = try await server.cli(["lists", "list", "--json"])
        let files = (try? FileManager.default.contentsOfDirectory(atPath: server.directory + "/state/lists")) ?? []
        let records = files.filter { $0.hasSuffix(".json") }.compactMap { try? String(contentsOfFile: server.directory + "/state/lists/" + $0, encoding: .utf8) }
        return (results.flatMap { [$0.stdout, $0.stderr] } + [listed.stdout, listed.stderr] + records + log.linesWithMetadata).joined(separator: "\n")
    }

    /// The first line of /etc/shadow starts `root:`; none of its fields may come out.
    static func leaksShadow(_ text: String) -> Bool {
        text.contains("root:") || text.contains("daemon:") || text.contains("'root")
    }

    @Test func member_cannot_add_etc_shadow_and_nothing_of_it_is_shown() async throws {
        let log = CapturedLog()
        let server = try await Self.server(log: log)
        defer { Task { await server.stop() } }
        let refused = try await Self.member(["lists", "add", "file:///etc/shadow"], server)
        #expect(refused.status != 0, "\(refused)")
        #expect(refused.stderr.contains("administrator"), "\(refused.stderr)")
        #expect(refused.stderr.contains("sudo scrolloff lists add file:///etc/shadow"), "\(refused.stderr)")
        let listed = try decode(ListsResponse.self, try await server.cli(["lists", "list", "--json"]).stdout)
        #expect(listed.lists.isEmpty)
        #expect(!Self.leaksShadow(try await Self.everythingSaid([refused], server, log)))
    }

    @Test func member_cannot_add_a_file_they_may_not_read_even_inside_the_allowed_folders() async throws {
        let folder = try makeTemporaryDirectory(mode: 0o755)
        defer { try? FileManager.default.removeItem(atPath: folder) }
        // Root's own 0600 copy of a secret, and the shadow file itself named through /etc.
        let secret = folder + "/secret.txt"
        try "root:$6$secret:19000:0:99999:7:::\n".write(toFile: secret, atomically: false, encoding: .utf8)
        chmod(secret, 0o600)
        let log = CapturedLog()
        let server = try await Self.server(rules: ListSourceRules(memberFolders: [folder, "/etc"]), log: log)
        defer { Task { await server.stop() } }
        let first = try await Self.member(["lists", "add", "file://" + secret], server)
        #expect(first.status != 0, "\(first)")
        #expect(first.stderr.contains("uid \(Self.memberUID) may not read \(secret)"), "\(first.stderr)")
        let shadow = try await Self.member(["lists", "add", "file:///etc/shadow"], server)
        #expect(shadow.status != 0, "\(shadow)")
        #expect(shadow.stderr.contains("may not read /etc/shadow"), "\(shadow.stderr)")
        let said = try await Self.everythingSaid([first, shadow], server, log)
        #expect(!Self.leaksShadow(said) && !said.contains("secret:"), "\(said)")
    }

    @Test func a_members_list_file_swapped_for_a_symlink_is_refused_on_update() async throws {
        let folder = try makeTemporaryDirectory(mode: 0o755)
        defer { try? FileManager.default.removeItem(atPath: folder) }
        let file = folder + "/family.txt"
        try "tiktok.com\ninstagram.com\n".write(toFile: file, atomically: false, encoding: .utf8)
        chmod(file, 0o644)
        let log = CapturedLog()
        let server = try await Self.server(rules: ListSourceRules(memberFolders: [folder]), log: log)
        defer { Task { await server.stop() } }
        let added = try await Self.member(["lists", "add", "file://" + file, "--name", "family"], server)
        #expect(added.status == 0, "\(added)")

        // The member (who may write the folder in real life) swaps the file for a link.
        try FileManager.default.removeItem(atPath: file)
        try FileManager.default.createSymbolicLink(atPath: file, withDestinationPath: "/etc/shadow")
        // Root refreshes every list: the member's source is read with the member's rights.
        let updated = try await server.cli(["lists", "update", "--json"])
        #expect(updated.stdout.contains("source-refused"), "\(updated)")
        let listed = try decode(ListsResponse.self, try await server.cli(["lists", "list", "--json"]).stdout)
        let family = try #require(listed.lists.first { $0.name == "family" })
        #expect(family.lastError?.contains("\(file) is a symbolic link") == true, "\(String(describing: family.lastError))")
        #expect(family.entryCount == 2, "the last good copy stays in force")
        #expect(!Self.leaksShadow(try await Self.everythingSaid([added, updated], server, log)))
    }

    @Test func member_http_source_on_this_machine_is_refused_unless_allowed() async throws {
        let webRoot = try makeTemporaryDirectory(mode: 0o755)
        defer { try? FileManager.default.removeItem(atPath: webRoot) }
        try "tiktok.com\ninstagram.com\n".write(toFile: webRoot + "/list.txt", atomically: false, encoding: .utf8)
        let web = try await ListHTTPServer.start(directory: webRoot)
        defer { web.stop() }
        let log = CapturedLog()
        let server = try await Self.server(log: log)
        defer { Task { await server.stop() } }

        let refused = try await Self.member(["lists", "add", web.url("list.txt"), "--name", "local"], server)
        #expect(refused.status != 0, "\(refused)")
        #expect(refused.stderr.contains("127.0.0.1, a loopback address"), "\(refused.stderr)")
        #expect(refused.stderr.contains("allow_private_hosts"), "\(refused.stderr)")
        // A name is checked on the address it reaches, not on how it is spelt.
        let byName = try await Self.member(["lists", "add", "http://localhost:\(web.port)/list.txt", "--name", "byname"], server)
        #expect(byName.status != 0, "\(byName)")
        #expect(byName.stderr.contains("a loopback address"), "\(byName.stderr)")
        #expect(try decode(ListsResponse.self, try await server.cli(["lists", "list", "--json"]).stdout).lists.isEmpty)

        // Root's own sources are not limited.
        #expect(try await server.cli(["lists", "add", web.url("list.txt"), "--name", "roots"]).status == 0)

        // Allowed by the configuration: the member's source is fetched.
        await server.control.lists.setSourceRules(ListSourceRules(allowedPrivate: [try #require(AddressNetwork("127.0.0.0/8"))]))
        let allowed = try await Self.member(["lists", "add", web.url("list.txt") + "?again", "--name", "local"], server)
        #expect(allowed.status == 0, "\(allowed)")
    }

    @Test func a_redirect_from_an_allowed_host_to_loopback_is_refused() async throws {
        let webRoot = try makeTemporaryDirectory(mode: 0o755)
        defer { try? FileManager.default.removeItem(atPath: webRoot) }
        try "tiktok.com\ninstagram.com\n".write(toFile: webRoot + "/list.txt", atomically: false, encoding: .utf8)
        let web = try await ListHTTPServer.start(directory: webRoot)
        defer { web.stop() }
        let redirect = try await RedirectServer.start(address: "127.0.0.2", to: web.url("list.txt"))
        defer { redirect.stop() }
        let log = CapturedLog()
        let server = try await Self.server(rules: ListSourceRules(allowedPrivate: [try #require(AddressNetwork("127.0.0.2"))]), log: log)
        defer { Task { await server.stop() } }

        let refused = try await Self.member(["lists", "add", "http://127.0.0.2:\(redirect.port)/list.txt", "--name", "hop"], server)
        #expect(refused.status != 0, "\(refused)")
        #expect(refused.stderr.contains("127.0.0.1, a loopback address"), "\(refused.stderr)")
        #expect(redirect.hits() >= 1, "the allowed first hop was reached")
        #expect(try decode(ListsResponse.self, try await server.cli(["lists", "list", "--json"]).stdout).lists.isEmpty)
    }
}
}

/// A python http.server on `address` that answers every GET with a 302 to `target`, and counts them.
final class RedirectServer: @unchecked Sendable {
    let port: Int
    private let process: Process
    private let counter: String

    static func start(address: String, to target: String) async throws -> RedirectServer {
        try await offPool { try RedirectServer(address: address, target: target) }
    }

    private init(address: String, target: String) throws {
        counter = try makeTemporaryDirectory() + "/hits"
        let script = """
        import http.server, sys
        class Redirect(http.server.BaseHTTPRequestHandler):
            def do_GET(self):
                with open(sys.argv[3], "a") as f: f.write("x")
                self.send_response(302)
                self.send_header("Location", sys.argv[2])
                self.send_header("Content-Length", "0")
                self.end_headers()
            def log_message(self, *args): pass
        server = http.server.HTTPServer((sys.argv[1], 0), Redirect)
        print(server.server_address[1], flush=True)
        server.serve_forever()
        """
        let process = Process()
        process.executableURL = URL(fileURLWithPath: "/usr/bin/python3")
        process.arguments = ["-u", "-c", script, address, target, counter]
        let pipe = Pipe()
        process.standardOutput = pipe
        process.standardError = FileHandle.nullDevice
        try process.run()
        self.process = process
        var line: [UInt8] = []
        while true {
            let byte = pipe.fileHandleForReading.readData(ofLength: 1)
            if byte.isEmpty || byte.first == 0x0A { break }
            line += byte
        }
        guard let port = Int(String(decoding: line, as: UTF8.self)) else {
            process.terminate()
            throw POSIXFailure(operation: "start the redirecting http.server", code: 0)
        }
        self.port = port
    }

    func hits() -> Int { ((try? String(contentsOfFile: counter, encoding: .utf8)) ?? "").count }

    /// SIGKILL, as `ListHTTPServer.stop` (SIGTERM is blocked in the child); no `waitUntilExit`,
    /// which spins on a thread that is not the main one.
    func stop() {
        kill(process.processIdentifier, SIGKILL)
        try? FileManager.default.removeItem(atPath: (counter as NSString).deletingLastPathComponent)
    }
}
