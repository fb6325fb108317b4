import Foundation
#if canImport(Glibc)
import Glibc
#endif
import TestSupport
import Testing

/// `scrolloff-dns store copy` as a person runs it, and a household server that asks for a password
/// and speaks TLS: the real binaries against a real PostgreSQL. In SharedStoreEndToEndTests so
/// they run in `make test`'s shared phase, one at a time.
extension SharedStoreEndToEndTests {
    /// A helper alone on SQLite with a block, a schedule, a plan, an alternative, credit given and
    /// a list; `store copy` to a server that asks for a password, row for row; a second run
    /// refused without `--force`; `--force` replaces; and back to a new SQLite folder, the same
    /// rows. Then the ways it must refuse and leave everything as it was.
    @Test func store_copy_moves_a_helpers_state_to_a_password_server_and_back_row_for_row_and_refuses_what_it_must() throws {
        let scratch = try Scratch()
        let db = try TestPostgres(tcpAddress: "127.0.0.1", port: try FreePort.pick(), password: "household words")
        defer { db.stop() }
        let url = "postgresql://scrolloff@127.0.0.1:\(db.port)/postgres?sslmode=disable"
        let password = try Self.privateFile(scratch, "db-password", "household words\n")
        let wrong = try Self.privateFile(scratch, "wrong-password", "guessed\n")
        let upstream = try Dnsmasq(scratch: scratch)
        let listFolder = scratch.path + "/lists-src"
        try FileManager.default.createDirectory(atPath: listFolder, withIntermediateDirectories: true)
        try "doom1.example\ndoom2.example\n".write(toFile: listFolder + "/doom.txt", atomically: true, encoding: .utf8)
        chmod(listFolder + "/doom.txt", 0o644)
        chmod(listFolder, 0o755)

        // The state: a helper alone on SQLite, changed through the CLI as a person would.
        let state = scratch.path + "/solo-state"
        let solo = try HelperLaunch(executable: Products.scrolloffDNS, upstreams: [HelperLaunch.loopback(upstream.port)], stateDirectory: state,
                                    controlSocket: "\(scratch.path)/solo.sock",
                                    config: try scratch.file("solo.toml", "[lists]\nmember_file_folders = [\"\(listFolder)\"]\n"),
                                    environment: ["TZ": "UTC"]).spawn(scratch: scratch, label: "words-solo")
        defer { if solo.isRunning { solo.signal(SIGKILL); solo.process.wait() } }
        try solo.waitForControlSocket()
        for command in [["block", "instagram"], ["schedule", "add", "bedtime", "--from", "22:00", "--to", "06:00", "--entries", "tiktok"],
                        ["plan", "add", "--when", "I reach for my phone in bed", "--then", "read a page"], ["alternatives", "add", "a walk"],
                        ["adjust", "+10m", "--note", "a gift"], ["lists", "add", "file://\(listFolder)/doom.txt", "--name", "doomlist"]] {
            let done = try runWithStatus(Products.scrolloff, command + ["--socket", "\(scratch.path)/solo.sock"])
            #expect(done.exitCode == 0, "\(command): \(done)")
        }
        solo.signal(SIGTERM)
        solo.process.wait()
        let database = state + "/scrolloff.sqlite"
        let copy = { (arguments: [String]) throws -> Outcome in try runWithStatus(Products.scrolloffDNS, ["store", "copy"] + arguments) }

        let first = try copy(["--from", "sqlite:\(state)", "--to", url, "--password-file", password])
        #expect(first.exitCode == 0 && first.output.contains("Copied"), "\(first)")
        // Row for row: every table the server holds rows of holds the SQLite state's count.
        let tables = try db.query("SELECT table_name FROM information_schema.tables WHERE table_schema = 'public' ORDER BY 1")
            .split(separator: "\n").map(String.init)
        let copied = try tables.filter { table in
            (try? sqlite(database, "SELECT count(*) FROM sqlite_master WHERE type = 'table' AND name = '\(table)'")) == "1"
        }
        for table in copied {
            #expect(try db.query("SELECT count(*) FROM \(table)") == sqlite(database, "SELECT count(*) FROM \(table)"), "\(table)")
        }
        for (table, least) in [("blocks", 1), ("schedules", 1), ("plans", 1), ("alternatives", 1), ("ledger", 2), ("household_lists", 1)] {
            #expect(Int(try db.query("SELECT count(*) FROM \(table)")) ?? 0 >= least, "\(table) was not copied")
        }

        // A second run finds rows: refused, saying what to do, and the server unchanged.
        let version = try db.query("SELECT version FROM household WHERE id = 1")
        let again = try copy(["--from", "sqlite:\(state)", "--to", url, "--password-file", password])
        #expect(again.exitCode != 0 && again.output.contains("already holds rows") && again.output.contains("--force"), "\(again)")
        #expect(try db.query("SELECT version FROM household WHERE id = 1") == version)
        let forced = try copy(["--from", "sqlite:\(state)", "--to", url, "--password-file", password, "--force"])
        #expect(forced.exitCode == 0, "\(forced)")

        // Back to a new SQLite folder: the same rows as the state it came from.
        let back = scratch.path + "/back-state"
        let returned = try copy(["--from", url, "--to", "sqlite:\(back)", "--password-file", password])
        #expect(returned.exitCode == 0, "\(returned)")
        for table in copied {
            let original = try sqlite(database, "SELECT * FROM \(table)").split(separator: "\n").sorted()
            let roundTrip = try sqlite(back + "/scrolloff.sqlite", "SELECT * FROM \(table)").split(separator: "\n").sorted()
            #expect(original == roundTrip, "\(table) differs after the round trip")
        }

        // Refusals, each with nothing written.
        let versionNow = try db.query("SELECT version FROM household WHERE id = 1")
        let nowhere = scratch.path + "/no-such-state"
        let missing = try copy(["--from", "sqlite:\(nowhere)", "--to", url, "--password-file", password, "--force"])
        #expect(missing.exitCode != 0 && missing.output.contains("no SQLite state at"), "\(missing)")
        #expect(!FileManager.default.fileExists(atPath: nowhere), "reading a state that is not there made one")
        let refusedLogin = try copy(["--from", "sqlite:\(state)", "--to", url, "--password-file", wrong, "--force"])
        #expect(refusedLogin.exitCode != 0 && refusedLogin.output.contains("password authentication failed")
            && refusedLogin.output.contains("password"), "\(refusedLogin)")
        let refusedRead = try copy(["--from", url, "--to", "sqlite:\(scratch.path)/never", "--password-file", wrong])
        #expect(refusedRead.exitCode != 0 && !FileManager.default.fileExists(atPath: "\(scratch.path)/never"), "\(refusedRead)")
        let noSocket = try copy(["--from", "sqlite:\(state)", "--to", "postgresql://scrolloff@/postgres?host=\(scratch.path)/no-server", "--force"])
        #expect(noSocket.exitCode != 0 && noSocket.output.contains("cannot be reached"), "\(noSocket)")
        #expect(try db.query("SELECT version FROM household WHERE id = 1") == versionNow, "a refused copy changed the server")

        // A destination whose database file is a symbolic link to another file, or another user's:
        // root would write into it (and make it 600).
        let victim = try scratch.file("victim.txt", "someone's notes\n")
        chmod(victim, 0o644)
        let linked = scratch.path + "/linked-state"
        try FileManager.default.createDirectory(atPath: linked, withIntermediateDirectories: true)
        chmod(linked, 0o700)
        symlink(victim, linked + "/scrolloff.sqlite")
        let throughLink = try copy(["--from", url, "--to", "sqlite:\(linked)", "--password-file", password, "--force"])
        #expect(throughLink.exitCode != 0 && throughLink.output.contains("symbolic link"), "\(throughLink)")
        let others = scratch.path + "/members-state"
        try FileManager.default.createDirectory(atPath: others, withIntermediateDirectories: true)
        let theirs = try scratch.file("members-state/scrolloff.sqlite", "")
        chmod(theirs, 0o644)
        chown(others, 1000, 1000)
        chown(theirs, 1000, 1000)
        let intoTheirs = try copy(["--from", url, "--to", "sqlite:\(others)", "--password-file", password, "--force"])
        #expect(intoTheirs.exitCode != 0 && intoTheirs.output.contains("belongs to uid 1000"), "\(intoTheirs)")
        // A folder that is not a state folder (as /etc or /tmp would be): opening it would make it 700.
        let busy = scratch.path + "/busy"
        try FileManager.default.createDirectory(atPath: busy, withIntermediateDirectories: true)
        _ = try scratch.file("busy/notes.txt", "keep\n")
        chmod(busy, 0o755)
        let intoBusy = try copy(["--from", url, "--to", "sqlite:\(busy)", "--password-file", password])
        #expect(intoBusy.exitCode != 0 && intoBusy.output.contains("holds other files and no state"), "\(intoBusy)")
        #expect(!FileManager.default.fileExists(atPath: busy + "/scrolloff.sqlite"))
        for (file, text) in [(victim, "someone's notes\n"), (theirs, "")] {
            var info = stat()
            #expect(lstat(file, &info) == 0 && info.st_mode & 0o777 == 0o644, "\(file)'s mode was changed")
            #expect((try? String(contentsOfFile: file, encoding: .utf8)) == text, "\(file) was written")
        }
        var busyInfo = stat()
        #expect(stat(busy, &busyInfo) == 0 && busyInfo.st_mode & 0o777 == 0o755, "the folder's mode was changed")
    }

    /// A household server that asks for a password (scram-sha-256) and speaks TLS: a helper with
    /// `[store] password_file` and `tls_ca_file` and `sslmode=verify-full` starts, works and its
    /// connections are encrypted; a wrong password, and a certificate checked against the
    /// system's trust store only (which does not know the household's CA), are refused at start
    /// with words that say what is wrong.
    @Test func a_helper_logs_in_with_its_password_file_over_verified_tls_and_a_wrong_password_or_unknown_certificate_is_refused() throws {
        let scratch = try Scratch()
        let pki = try Self.householdCertificate(scratch)
        let db = try TestPostgres(tcpAddress: "127.0.0.1", port: try FreePort.pick(), password: "household words",
                                  certificate: (pki.certificate, pki.key))
        defer { db.stop() }
        let upstream = try Dnsmasq(scratch: scratch)
        let password = try Self.privateFile(scratch, "db-password", "household words\n")
        let wrong = try Self.privateFile(scratch, "wrong-password", "guessed\n")
        let url = "postgresql://scrolloff@localhost:\(db.port)/postgres?sslmode=verify-full"

        let a = try HouseholdNode("pg-a", url: url, scratch: scratch, upstream: upstream.port,
                                  settings: "password_file = \"\(password)\"\ntls_ca_file = \"\(pki.ca)\"\n")
        defer { a.stop() }
        let blocked = try a.cli(["block", "instagram"])
        #expect(blocked.exitCode == 0, "\(blocked)")
        #expect(try db.query("SELECT count(*) FROM blocks") == "1")
        let encrypted = try db.query("SELECT count(*) FILTER (WHERE s.ssl), count(*) FROM pg_stat_ssl s JOIN pg_stat_activity a USING (pid) "
                                     + "WHERE a.client_addr IS NOT NULL AND a.backend_type = 'client backend'")
        let counts = encrypted.split(separator: "|").map(String.init)
        #expect(counts.count == 2 && counts[0] == counts[1] && counts[0] != "0", "TLS connections, all connections: \(encrypted)")

        func start(_ name: String, _ settings: String) throws -> Outcome {
            let config = try scratch.file("\(name).toml", "[store]\nbackend = \"postgresql\"\nurl = \"\(url)\"\nnode = \"\(name)\"\n\(settings)")
            return try HelperLaunch(executable: Products.scrolloffDNS, listen: ["127.0.0.1:0"], upstreams: [HelperLaunch.loopback(upstream.port)],
                                    stateDirectory: "\(scratch.path)/\(name)-state", controlSocket: "\(scratch.path)/\(name).sock", config: config,
                                    wrappers: [.timeout(seconds: 30)], environment: ["TZ": "UTC"]).outcome()
        }
        let refused = try start("pg-wrong", "password_file = \"\(wrong)\"\ntls_ca_file = \"\(pki.ca)\"\n")
        #expect(refused.exitCode != 0 && refused.exitCode != 124, "\(refused)")
        #expect(refused.output.contains("password authentication failed") && refused.output.contains("password_file"), "\(refused)")
        let unverified = try start("pg-unverified", "password_file = \"\(password)\"\n")
        #expect(unverified.exitCode != 0 && unverified.exitCode != 124, "\(unverified)")
        #expect(unverified.output.contains("household database") && unverified.output.contains("certificate was not verified")
            && unverified.output.contains("tls_ca_file"), "\(unverified)")
    }

    /// A file as `password_file` must be: root's, mode 600.
    static func privateFile(_ scratch: Scratch, _ name: String, _ text: String) throws -> String {
        let path = try scratch.file(name, text)
        chmod(path, 0o600)
        return path
    }

    /// A CA of the household's own and a server certificate it signed for localhost (openssl, in
    /// the scratch folder): what a person makes for a server on the LAN.
    static func householdCertificate(_ scratch: Scratch) throws -> (ca: String, certificate: String, key: String) {
        let dir = scratch.path
        let ext = try scratch.file("server.ext", "subjectAltName = DNS:localhost, IP:127.0.0.1\n")
        for arguments in [
            ["req", "-x509", "-newkey", "ec", "-pkeyopt", "ec_paramgen_curve:prime256v1", "-nodes", "-keyout", "\(dir)/ca.key", "-out", "\(dir)/ca.pem",
             "-days", "2", "-subj", "/CN=scrolloff words test CA"],
            ["req", "-newkey", "ec", "-pkeyopt", "ec_paramgen_curve:prime256v1", "-nodes", "-keyout", "\(dir)/server.key", "-out", "\(dir)/server.csr",
             "-subj", "/CN=localhost"],
            ["x509", "-req", "-in", "\(dir)/server.csr", "-CA", "\(dir)/ca.pem", "-CAkey", "\(dir)/ca.key", "-CAcreateserial", "-days", "2",
             "-extfile", ext, "-out", "\(dir)/server.pem"],
        ] {
            let made = try runWithStatus("/usr/bin/openssl", arguments)
            guard made.exitCode == 0 else { throw HarnessError("openssl \(arguments.joined(separator: " ")): \(made)") }
        }
        chmod("\(dir)/ca.pem", 0o644)
        return ("\(dir)/ca.pem", "\(dir)/server.pem", "\(dir)/server.key")
    }
}
