import Foundation
import Testing

/// `scrolloff-dns check-config` run as the real binary (built because this target depends on it).
@Suite("check-config with the real binary")
struct CheckConfigTests {
    static var binary: String {
        let executable = (try? FileManager.default.destinationOfSymbolicLink(atPath: "/proc/self/exe")) ?? CommandLine.arguments[0]
        var url = URL(fileURLWithPath: executable).deletingLastPathComponent()
        while !FileManager.default.fileExists(atPath: url.appendingPathComponent("scrolloff-dns").path), url.path != "/" {
            url.deleteLastPathComponent()
        }
        return url.appendingPathComponent("scrolloff-dns").path
    }

    struct Run { var status: Int32; var stdout: String; var stderr: String }

    static func checkConfig(_ arguments: [String]) throws -> Run {
        let process = Process()
        process.executableURL = URL(fileURLWithPath: binary)
        process.arguments = ["check-config"] + arguments
        let out = Pipe(), err = Pipe()
        process.standardOutput = out
        process.standardError = err
        try process.run()
        let stdout = out.fileHandleForReading.readDataToEndOfFile()
        let stderr = err.fileHandleForReading.readDataToEndOfFile()
        process.waitUntilExit()
        return Run(status: process.terminationStatus, stdout: String(decoding: stdout, as: UTF8.self),
                   stderr: String(decoding: stderr, as: UTF8.self))
    }

    @Test func shipped_sample_is_valid_exit_0_with_a_summary() throws {
        // The sample takes its upstreams from resolv.conf: one naming another resolver, as most machines'.
        let scratch = try Scratch()
        let resolv = try scratch.file("resolv.conf", "nameserver 192.0.2.53\n")
        let run = try Self.checkConfig(["--config", samplePath, "--resolv-conf", resolv])
        #expect(run.status == 0, "\(run.stderr)")
        #expect(run.stdout.contains("\(samplePath): the configuration is valid."))
        #expect(run.stdout.contains("2 listen addresses: 127.0.0.1:53, [::1]:53") || run.stdout.contains("listen address"))
        #expect(run.stdout.contains("blocked names: null answers with a 10 s TTL"))
        #expect(run.stdout.contains("1 profile: default (strict"))
    }

    /// SPEC §11: nested client networks were accepted silently; the summary says which profile wins.
    @Test func nested_client_networks_are_said_with_the_profile_that_wins() throws {
        let scratch = try Scratch()
        let resolv = try scratch.file("resolv.conf", "nameserver 192.0.2.53\n")
        let file = try scratch.file("nested.toml", """
            [[profiles]]
            name = "kids"
            clients = ["10.1.0.0/16"]

            [[profiles]]
            name = "adults"
            clients = ["10.0.0.0/8"]
            """)
        let run = try Self.checkConfig(["--config", file, "--resolv-conf", resolv])
        #expect(run.status == 0, "\(run.stderr)")
        #expect(run.stdout.contains(
            "overlap: 10.1.0.0/16 (profile kids) lies inside 10.0.0.0/8 (profile adults): clients in 10.1.0.0/16 follow kids, since the longer prefix wins"),
            "\(run.stdout)")
    }

    /// Two resolvers on one database: the summary says where the state lives, so a file pointing a helper at the
    /// household's database (or not) can be checked before the restart that applies it; never
    /// the database password.
    @Test func the_summary_names_the_store_sqlite_file_or_postgresql_server_and_node_without_the_password() throws {
        let scratch = try Scratch()
        let resolv = try scratch.file("resolv.conf", "nameserver 192.0.2.53\n")
        let state = scratch.path + "/state"
        try FileManager.default.createDirectory(atPath: state, withIntermediateDirectories: true, attributes: [.posixPermissions: 0o700])
        let plain = try scratch.file("sqlite.toml", "[helper]\nstate_dir = \"\(state)\"\n")
        let local = try Self.checkConfig(["--config", plain, "--resolv-conf", resolv])
        #expect(local.status == 0, "\(local.stderr)")
        #expect(local.stdout.contains("store: sqlite \(state)/scrolloff.sqlite, this helper alone"), "\(local.stdout)")

        let secret = "correct-horse-battery-staple"
        let passwordFile = try scratch.file("db-password", secret + "\n")
        let shared = try scratch.file("postgresql.toml", """
            [store]
            backend = "postgresql"
            url = "postgresql://scrolloff@db.home.arpa/household?sslmode=require"
            password_file = "\(passwordFile)"
            node = "resolver-2"
            """)
        let run = try Self.checkConfig(["--config", shared, "--resolv-conf", resolv])
        #expect(run.status == 0, "\(run.stderr)")
        #expect(run.stdout.contains(
            "store: postgresql postgresql://scrolloff@db.home.arpa:5432/household?sslmode=require, shared by the household's helpers; "
                + "this helper is node resolver-2; password read from \(passwordFile)"), "\(run.stdout)")
        #expect(!run.stdout.contains(secret) && !run.stderr.contains(secret))
    }

    @Test func bad_file_exits_1_naming_every_key_and_line() throws {
        let scratch = try Scratch()
        let file = try scratch.file("bad.toml", "[dns]\nblocked_ttl = 30\n\n[profile.knobs]\ncooldwn = \"2h\"\n")
        let run = try Self.checkConfig(["--config", file])
        #expect(run.status == 1)
        #expect(run.stderr.contains("2 problems in \(file)"), "\(run.stderr)")
        #expect(run.stderr.contains("\(file):2: dns.blocked_ttl is 30; allowed: 1s to 10s"), "\(run.stderr)")
        #expect(run.stderr.contains("\(file):5: profile.knobs.cooldwn is not a setting of [profile.knobs] (did you mean cooldown?)"),
                "\(run.stderr)")
        #expect(run.stdout.isEmpty)
    }

    @Test func syntax_error_exits_1_with_the_line() throws {
        let scratch = try Scratch()
        let file = try scratch.file("syntax.toml", "[dns]\nblocked_ttl = = 3\n")
        let run = try Self.checkConfig(["--config", file])
        #expect(run.status == 1)
        #expect(run.stderr.contains("\(file):2:"), "\(run.stderr)")
        #expect(run.stderr.contains("not valid TOML"))
    }

    /// The checks start and reload make beyond the file's own are made here too, with their words:
    /// a file whose empty `upstreams` falls back to a resolv.conf naming only this server would
    /// leave the helper nobody to ask, and `systemctl reload` would refuse it.
    @Test(arguments: [
        ("nameserver 127.0.0.1\n", "listen = [\"127.0.0.1:53\"]"),
        ("# no servers at all\n", "listen = [\"127.0.0.1:53\"]"),
        ("nameserver 127.0.0.1\nnameserver ::1\n", "listen = [\"127.0.0.1:53\", \"[::1]:53\"]"),
    ])
    func empty_upstreams_with_a_resolv_conf_naming_only_this_server_exits_1_as_reload_would(
        resolvConf: String, listen: String
    ) throws {
        let scratch = try Scratch()
        let resolv = try scratch.file("resolv.conf", resolvConf)
        let file = try scratch.file("loop.toml", "[dns]\n\(listen)\nupstreams = []\n")
        let run = try Self.checkConfig(["--config", file, "--resolv-conf", resolv])
        #expect(run.status == 1, "\(run.stdout)")
        #expect(run.stderr.contains("\(file): no upstream resolver: upstreams is empty and /etc/resolv.conf names no server other than this one"),
                "\(run.stderr)")
        #expect(run.stderr.contains("upstreams = [\"9.9.9.9\"]"), "it says what to write")
        #expect(run.stdout.isEmpty)

        // The same file with another resolver in resolv.conf passes: the refusal is about the loop alone.
        let other = try scratch.file("other.conf", resolvConf + "nameserver 192.0.2.53\n")
        let passing = try Self.checkConfig(["--config", file, "--resolv-conf", other])
        #expect(passing.status == 0, "\(passing.stderr)")
    }

    /// `[firewall]` (SPEC §9b) is checked like every section: its own values with key and line, and
    /// what it needs from the rest of the file (the DNS sinkhole to redirect to).
    @Test func a_bad_firewall_section_exits_1_with_its_key_and_line() throws {
        let scratch = try Scratch()
        let bad = try scratch.file("firewall.toml", "[firewall]\nmode = \"gateway\"\nlan_interfaces = [\"a very long interface name\"]\n")
        let run = try Self.checkConfig(["--config", bad])
        #expect(run.status == 1)
        #expect(run.stderr.contains("\(bad):2: firewall.mode is"), "\(run.stderr)")
        #expect(run.stderr.contains("workstation or router"), "\(run.stderr)")
        #expect(run.stderr.contains("\(bad):3: firewall.lan_interfaces[1]"), "\(run.stderr)")

        let hosts = try scratch.file("hosts.toml", "[helper]\nmode = \"hosts\"\n[dns]\nupstreams = [\"9.9.9.9\"]\n[firewall]\nenabled = true\n")
        let refused = try Self.checkConfig(["--config", hosts])
        #expect(refused.status == 1)
        #expect(refused.stderr.contains("[firewall] enabled needs the DNS sinkhole"), "\(refused.stderr)")

        let good = try scratch.file("router.toml", "[dns]\nupstreams = [\"9.9.9.9\"]\nlisten = [\"0.0.0.0:53\"]\n"
            + "[firewall]\nenabled = true\nmode = \"router\"\nlan_interfaces = [\"br-lan\"]\n")
        let passed = try Self.checkConfig(["--config", good])
        #expect(passed.status == 0, "\(passed.stderr)")
    }

    @Test func missing_file_named_with_config_exits_1() throws {
        let run = try Self.checkConfig(["--config", "/nonexistent/scrolloff.toml"])
        #expect(run.status == 1)
        #expect(run.stderr.contains("/nonexistent/scrolloff.toml"))
        #expect(run.stderr.contains("no such file"))
    }
}
