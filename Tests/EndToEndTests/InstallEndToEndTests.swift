import Foundation
import TestSupport
import Testing

/// `make install` / `make uninstall` through scripts/install.sh into a temporary DESTDIR, with the
/// debug binaries this test run built (SPEC §13; README "Install as a service").
@Suite(.serialized)
struct InstallEndToEndTests {
    /// The checkout: this file is Tests/EndToEndTests/InstallEndToEndTests.swift.
    static let sourceRoot = URL(fileURLWithPath: #filePath).deletingLastPathComponent().deletingLastPathComponent()
        .deletingLastPathComponent().path

    /// What scripts/generate-manuals.sh writes, as stand-ins: install.sh copies them where `man` and
    /// the shells look (ManualPageTests in DocsTests checks the real ones).
    static let manualFiles = ["man1/scrolloff.1", "man1/scrolloff-dns.1", "completions/bash/scrolloff", "completions/bash/scrolloff-dns",
                              "completions/zsh/_scrolloff", "completions/zsh/_scrolloff-dns", "completions/fish/scrolloff.fish",
                              "completions/fish/scrolloff-dns.fish"]
    /// Where install.sh puts each of `manualFiles` under PREFIX /usr/local.
    static let installedManualFiles = ["usr/local/share/man/man1/scrolloff.1", "usr/local/share/man/man1/scrolloff-dns.1",
                                       "usr/local/share/bash-completion/completions/scrolloff",
                                       "usr/local/share/bash-completion/completions/scrolloff-dns",
                                       "usr/local/share/zsh/site-functions/_scrolloff", "usr/local/share/zsh/site-functions/_scrolloff-dns",
                                       "usr/local/share/fish/vendor_completions.d/scrolloff.fish",
                                       "usr/local/share/fish/vendor_completions.d/scrolloff-dns.fish"]

    /// Writes the stand-ins into `folder` and returns it.
    static func standInManuals(at folder: String) throws -> String {
        for file in manualFiles {
            let path = folder + "/" + file
            try FileManager.default.createDirectory(atPath: (path as NSString).deletingLastPathComponent, withIntermediateDirectories: true)
            try "stand-in for \(file)\n".write(toFile: path, atomically: true, encoding: .utf8)
        }
        return folder
    }

    /// Runs scripts/install.sh with exactly these locations (nothing inherited from the caller's environment).
    static func installScript(_ action: String, destdir: String, prefix: String = "/usr/local", stateDir: String = "/var/lib/scrolloff",
                              purge: Bool = false, manuals: String? = nil) throws -> (status: Int32, output: String) {
        // runWithStatus (RestartableHelper.swift): exit code, -1 when killed by a signal.
        var arguments = [
            "PREFIX=\(prefix)", "DESTDIR=\(destdir)", "SYSCONFDIR=/etc", "UNITDIR=\(prefix)/lib/systemd/system",
            "STATEDIR=\(stateDir)", "PURGE=\(purge ? "1" : "")", "/bin/bash", sourceRoot + "/scripts/install.sh", action,
        ]
        if action == "install" {
            // Stand-ins beside DESTDIR unless the test brings its own.
            let folder = try manuals ?? standInManuals(at: (destdir as NSString).deletingLastPathComponent + "/manuals")
            arguments += ["--bin-dir", Products.directory, "--manuals", folder]
        }
        let outcome = try runWithStatus("/usr/bin/env", arguments)
        return (outcome.exitCode, outcome.output)
    }

    static func mode(_ path: String) -> Int? {
        (try? FileManager.default.attributesOfItem(atPath: path)[.posixPermissions] as? NSNumber)?.intValue
    }

    static func text(_ path: String) -> String? { try? String(contentsOfFile: path, encoding: .utf8) }

    @Test func install_lays_out_every_file_with_its_mode_and_content_and_a_second_run_changes_nothing() throws {
        let scratch = try Scratch()
        let root = scratch.path + "/root"
        for run in 1...2 {
            let (status, output) = try Self.installScript("install", destdir: root)
            #expect(status == 0, "run \(run): \(output)")
            // One program, stripped; `scrolloff` a link to it that answers as the CLI.
            let helper = "\(root)/usr/local/bin/scrolloff-dns"
            #expect(Self.mode(helper) == 0o755)
            let sections = try runWithStatus("/usr/bin/readelf", ["--section-headers", "--wide", helper])
            #expect(sections.exitCode == 0 && sections.output.contains(".text"), "\(sections)")
            #expect(!sections.output.contains(".symtab"), "the installed scrolloff-dns still has its symbol table")
            #expect(try FileManager.default.destinationOfSymbolicLink(atPath: "\(root)/usr/local/bin/scrolloff") == "scrolloff-dns")
            let version = try runWithStatus("\(root)/usr/local/bin/scrolloff", ["--version"])
            let built = try runWithStatus(Products.scrolloff, ["--version"])
            #expect(version.exitCode == 0 && version.output == built.output, "\(version)")
            #expect(try runWithStatus(helper, ["check-config", "--help"]).exitCode == 0)
            for (file, installed) in zip(Self.manualFiles, Self.installedManualFiles) {
                #expect(Self.text("\(root)/\(installed)") == "stand-in for \(file)\n", "\(installed)")
                #expect(Self.mode("\(root)/\(installed)") == 0o644, "\(installed)")
            }
            let unit = "\(root)/usr/local/lib/systemd/system/scrolloff-dns.service"
            #expect(Self.mode(unit) == 0o644)
            #expect(Self.text(unit) == Self.text(Self.sourceRoot + "/etc/systemd/scrolloff-dns.service"))
            let config = "\(root)/etc/scrolloff/scrolloff.toml"
            #expect(Self.mode(config) == 0o644)
            #expect(Self.text(config) == Self.text(Self.sourceRoot + "/etc/scrolloff.toml"))
            #expect(!FileManager.default.fileExists(atPath: config + ".new"), "an unchanged config needs no .new beside it")
            let catalog = "\(root)/usr/local/share/scrolloff/blocklists"
            #expect(FileManager.default.contentsEqual(atPath: catalog, andPath: Self.sourceRoot + "/blocklists"))
            #expect(Self.mode(catalog + "/services") == 0o755)
            #expect(Self.mode(catalog + "/README.md") == 0o644)
            #expect(Self.mode("\(root)/var/lib/scrolloff") == 0o700)
            // DESTDIR means staging: no group, no systemctl; the output says so and says what comes next.
            #expect(output.contains("group scrolloff not created: DESTDIR is set"))
            for step in ["usermod -aG scrolloff", "systemctl enable --now scrolloff-dns", "127.0.0.1", "scrolloff doctor"] {
                #expect(output.contains(step), "\(step)")
            }
        }
    }

    @Test func install_without_the_manual_pages_stops_before_copying_anything_and_says_what_to_run() throws {
        let scratch = try Scratch()
        let root = scratch.path + "/root"
        let (status, output) = try Self.installScript("install", destdir: root, manuals: scratch.path + "/no-manuals")
        #expect(status != 0)
        #expect(output.contains("no-manuals/man1/scrolloff.1 is missing") && output.contains("make release"), "\(output)")
        #expect(!FileManager.default.fileExists(atPath: root + "/usr/local/bin/scrolloff-dns"))
    }

    @Test func an_edited_config_is_never_overwritten_and_the_new_sample_goes_beside_it() throws {
        let scratch = try Scratch()
        let root = scratch.path + "/root"
        #expect(try Self.installScript("install", destdir: root).status == 0)
        let config = "\(root)/etc/scrolloff/scrolloff.toml"
        let edited = "# mine\nlisten = [\"127.0.0.1:53\", \"192.168.1.2:53\"]\n"
        try edited.write(toFile: config, atomically: true, encoding: .utf8)
        for _ in 1...2 {
            let (status, output) = try Self.installScript("install", destdir: root)
            #expect(status == 0, "\(output)")
            #expect(Self.text(config) == edited)
            #expect(Self.text(config + ".new") == Self.text(Self.sourceRoot + "/etc/scrolloff.toml"))
            #expect(output.contains("scrolloff.toml.new"), "\(output)")
        }
    }

    @Test func uninstall_removes_the_files_and_keeps_the_database_and_an_edited_config_unless_purged() throws {
        let scratch = try Scratch()
        let root = scratch.path + "/root"
        #expect(try Self.installScript("install", destdir: root).status == 0)
        try "ledger".write(toFile: "\(root)/var/lib/scrolloff/scrolloff.sqlite", atomically: true, encoding: .utf8)
        try "# mine\n".write(toFile: "\(root)/etc/scrolloff/scrolloff.toml", atomically: true, encoding: .utf8)

        let (status, output) = try Self.installScript("uninstall", destdir: root)
        #expect(status == 0, "\(output)")
        for gone in ["usr/local/bin/scrolloff", "usr/local/bin/scrolloff-dns", "usr/local/share/scrolloff",
                     "usr/local/lib/systemd/system/scrolloff-dns.service", "etc/scrolloff/scrolloff.toml.new"] + Self.installedManualFiles {
            #expect(!FileManager.default.fileExists(atPath: "\(root)/\(gone)"), "\(gone)")
        }
        #expect(Self.text("\(root)/var/lib/scrolloff/scrolloff.sqlite") == "ledger")
        #expect(Self.text("\(root)/etc/scrolloff/scrolloff.toml") == "# mine\n")
        #expect(output.contains("PURGE=1"), "\(output)")
        // A second uninstall finds nothing to remove and still succeeds.
        #expect(try Self.installScript("uninstall", destdir: root).status == 0)

        let purged = try Self.installScript("uninstall", destdir: root, purge: true)
        #expect(purged.status == 0, "\(purged.output)")
        #expect(!FileManager.default.fileExists(atPath: "\(root)/var/lib/scrolloff"))
        #expect(!FileManager.default.fileExists(atPath: "\(root)/etc/scrolloff"))
    }

    @Test func an_unedited_config_goes_with_uninstall() throws {
        let scratch = try Scratch()
        let root = scratch.path + "/root"
        #expect(try Self.installScript("install", destdir: root).status == 0)
        #expect(try Self.installScript("uninstall", destdir: root).status == 0)
        #expect(!FileManager.default.fileExists(atPath: "\(root)/etc/scrolloff"))
        #expect(FileManager.default.fileExists(atPath: "\(root)/var/lib/scrolloff"))
    }

    @Test func other_locations_are_written_into_the_unit() throws {
        let scratch = try Scratch()
        let root = scratch.path + "/root"
        let (status, output) = try Self.installScript("install", destdir: root, prefix: "/opt/scrolloff", stateDir: "/srv/scrolloff")
        #expect(status == 0, "\(output)")
        let unit = try #require(Self.text("\(root)/opt/scrolloff/lib/systemd/system/scrolloff-dns.service"))
        #expect(unit.contains("ExecStart=/opt/scrolloff/bin/scrolloff-dns start --config /etc/scrolloff/scrolloff.toml --state-dir /srv/scrolloff\n"))
        #expect(unit.contains("ExecReload=/opt/scrolloff/bin/scrolloff-dns check-config --config /etc/scrolloff/scrolloff.toml\n"))
        #expect(unit.contains("ReadWritePaths=/srv/scrolloff\n"))
        #expect(!unit.contains("/usr/local/bin"))
        #expect(Self.mode("\(root)/srv/scrolloff") == 0o700)
    }

    /// systemd's own checker on the installed unit; it also checks that ExecStart exists, so the
    /// unit is pointed at the binary inside DESTDIR.
    @Test func the_installed_unit_passes_systemd_analyze_verify() throws {
        let analyze = "/usr/bin/systemd-analyze"
        try #require(FileManager.default.isExecutableFile(atPath: analyze),
                     "systemd-analyze is missing: install the test packages with scripts/install-deps.sh --test")
        let scratch = try Scratch()
        let root = scratch.path + "/root"
        #expect(try Self.installScript("install", destdir: root).status == 0)
        let installed = try #require(Self.text("\(root)/usr/local/lib/systemd/system/scrolloff-dns.service"))
        try FileManager.default.createDirectory(atPath: scratch.path + "/verify", withIntermediateDirectories: true)
        let unit = try scratch.file("verify/scrolloff-dns.service",
                                    installed.replacingOccurrences(of: "ExecStart=/usr/local/bin/", with: "ExecStart=\(root)/usr/local/bin/")
                                        .replacingOccurrences(of: "ExecReload=/usr/local/bin/", with: "ExecReload=\(root)/usr/local/bin/"))
        let verify = try runWithStatus(analyze, ["verify", unit])
        #expect(verify.exitCode == 0, "\(verify.output)")
        // Unknown keys and bad values are only warnings for verify: require it to say nothing at all.
        #expect(verify.output.isEmpty, "\(verify.output)")
    }

    /// What README "Install as a service" promises of the unit, line by line, so a later edit cannot drop one unnoticed.
    @Test(arguments: [
        "Type=notify", "ExecReload=/usr/local/bin/scrolloff-dns check-config --config /etc/scrolloff/scrolloff.toml",
        "ExecReload=/bin/kill -HUP $MAINPID", "Restart=on-failure", "RuntimeDirectory=scrolloff",
        "StateDirectory=scrolloff", "StateDirectoryMode=0700", "CapabilityBoundingSet=CAP_NET_BIND_SERVICE CAP_CHOWN CAP_NET_ADMIN",
        "ProtectSystem=strict", "ReadWritePaths=/var/lib/scrolloff", "#ReadWritePaths=/etc", "ProtectHome=yes",
        "PrivateTmp=yes", "NoNewPrivileges=yes", "MemoryDenyWriteExecute=yes", "SystemCallFilter=@system-service",
        "RestrictAddressFamilies=AF_INET AF_INET6 AF_UNIX AF_NETLINK",
        "ExecStart=/usr/local/bin/scrolloff-dns start --config /etc/scrolloff/scrolloff.toml --state-dir /var/lib/scrolloff",
    ])
    func the_unit_has(_ line: String) throws {
        let unit = try #require(Self.text(Self.sourceRoot + "/etc/systemd/scrolloff-dns.service"))
        #expect(unit.split(separator: "\n").contains(Substring(line)))
    }

    /// systemd's own rating of the sandbox (0 best, 10 worst), offline; 3.0 keeps it "OK" with room
    /// for one more permission but catches a dropped group of settings.
    @Test func the_unit_sandbox_rates_at_most_3_0_by_systemd_analyze_security() throws {
        let analyze = "/usr/bin/systemd-analyze"
        try #require(FileManager.default.isExecutableFile(atPath: analyze),
                     "systemd-analyze is missing: install the test packages with scripts/install-deps.sh --test")
        let scratch = try Scratch()
        let root = scratch.path + "/root"
        #expect(try Self.installScript("install", destdir: root).status == 0)
        let installed = try #require(Self.text("\(root)/usr/local/lib/systemd/system/scrolloff-dns.service"))
        try FileManager.default.createDirectory(atPath: scratch.path + "/security", withIntermediateDirectories: true)
        let unit = try scratch.file("security/scrolloff-dns.service",
                                    installed.replacingOccurrences(of: "ExecStart=/usr/local/bin/", with: "ExecStart=\(root)/usr/local/bin/")
                                        .replacingOccurrences(of: "ExecReload=/usr/local/bin/", with: "ExecReload=\(root)/usr/local/bin/"))
        let rating = try runWithStatus(analyze, ["security", "--offline=true", "--threshold=30", "--no-pager", unit])
        #expect(rating.exitCode == 0, "\(rating.output.split(separator: "\n").filter { $0.hasPrefix("✗") || $0.contains("Overall") }.joined(separator: "\n"))")
        #expect(rating.output.contains("Overall exposure level for scrolloff-dns.service"), "\(rating.output)")
    }

    /// The installed helper finds the curated lists in $PREFIX/share/scrolloff (CatalogLocation),
    /// far from the source tree, and serves.
    @Test func the_installed_helper_finds_its_catalog_and_serves() throws {
        let scratch = try Scratch()
        let root = scratch.path + "/root"
        #expect(try Self.installScript("install", destdir: root).status == 0)
        let upstream = try Dnsmasq(scratch: scratch)
        let child = try HelperLaunch(
            executable: "\(root)/usr/local/bin/scrolloff-dns", upstreams: [HelperLaunch.loopback(upstream.port)],
            stateDirectory: "\(scratch.path)/state", controlSocket: "\(scratch.path)/control.sock", unsetEnvironment: ["SCROLLOFF_CATALOG"]
        ).spawn(scratch: scratch, label: "installed")
        let port = try child.listeningPort()
        #expect(try dig(port, ["+short", "host.test"]) == "10.0.0.7\n")
    }
}
