import Config
import Foundation
import Helper
import NIOCore
import ScrollOffCore
import Sinkhole
import Testing

@Suite("Good files: each key reaches the HelperConfiguration")
struct GoodFileTests {
    /// (file, setting as `effective` names it, value expected).
    @Test(arguments: [
        ("[helper]\nstate_dir = \"/srv/scrolloff\"", "stateDirectory", "/srv/scrolloff"),
        ("[helper]\ncontrol_socket = \"/run/so.sock\"", "controlSocket", "/run/so.sock"),
        ("[helper]\nlog_level = \"debug\"", "logLevel", "debug"),
        ("[helper]\nthreads = 3", "eventLoops", "3"),
        ("[helper]\nmode = \"dns\"\nhosts_file = \"/etc/hosts\"", "blockingMode", "null"),
        ("[helper]\nmode = \"hosts\"", "enforcementMode", "hosts"),
        ("[helper]\nmode = \"both\"", "enforcementMode", "both"),
        ("[helper]\nhosts_file = \"/srv/hosts\"", "hostsFile", "/srv/hosts"),
        ("[dns]\nlisten = [\"0.0.0.0:53\", \"[::]:53\"]", "listen", "0.0.0.0:53,[::]:53"),
        ("[dns]\nupstreams = [\"9.9.9.9\", \"[2620:fe::fe]:853\"]", "upstreams", "9.9.9.9:53,[2620:fe::fe]:853"),
        ("[dns]\nupstream_timeout = \"500ms\"", "forwarder", "500000000/1000000000"),
        ("[dns]\nunwanted_reply_threshold = 3\nupstream_timeout = \"500ms\"", "unwantedReplyThreshold", "3"),
        ("[dns]\nunwanted_reply_threshold = 0", "unwantedReplyThreshold", "0"),
        ("[dns]\nblocking_mode = \"nxdomain\"", "blockingMode", "nxdomain"),
        ("[dns]\nblocked_ttl = \"5s\"", "blockedTTL", "5"),
        ("[dns]\nblocked_ttl = 1", "blockedTTL", "1"),
        ("[dns]\ncache_size = 5000\ncache_min_ttl = \"1min\"\ncache_max_ttl = \"1d\"\ncache_max_negative_ttl = 300",
         "cache", "5000 60 86400 300 86400"),
        ("[dns]\nserve_stale_max_age = \"3d\"", "cache", "100000 0 86400 3600 259200"),
        ("[dns]\nserve_stale_max_age = 0", "cache", "100000 0 86400 3600 0"),
        ("[dns]\nrate_limit = 50", "rateLimit", "50/100"),
        ("[dns]\nrate_limit = 50\nrate_limit_burst = 80", "rateLimit", "50/80"),
        ("[dns]\nrate_limit_burst = 80", "rateLimit", "off"),
        ("[dns]\ntcp_connections = 1000\ntcp_connections_per_client = 100\ntcp_queries_per_connection = 16\ntcp_queries_per_client = 40\n"
            + "tcp_idle_timeout = \"30s\"\ntcp_unsent_bytes = 131072", "tcp", "1000/100/16/40/30000000000/131072"),
        ("[helper]\ncontrol_connections = 128\ncontrol_connections_per_user = 16", "control", "128/16"),
        ("[lists]\nrefresh_period = \"6h\"", "listRefreshPeriod", "21600000"),
        ("[lists]\ncatalog = \"/opt/blocklists\"", "catalogPath", "/opt/blocklists"),
        ("[[lists.source]]\nname = \"ads\"\nurl = \"https://example.org/hosts.txt\"\n[[lists.source]]\nurl = \"https://www.lists.example/x.txt\"",
         "listSources", "ads=https://example.org/hosts.txt,lists.example=https://www.lists.example/x.txt"),
        ("[metrics]\nlisten = \"127.0.0.1:9153\"", "metricsListen", "127.0.0.1:9153"),
        ("[metrics]\nlisten = \"\"", "metricsListen", "off"),
        ("", "webListen", "127.0.0.1:5381"),
        ("[web]\nlisten = \"0.0.0.0:8080\"", "webListen", "0.0.0.0:8080"),
        ("[web]\nlisten = \"\"", "webListen", "off"),
        ("", "web", "5000/300000"),
        ("[web]\nrequest_timeout = \"3s\"\nsign_in_max_delay = \"10min\"", "web", "3000/600000"),
        ("[profile]\ntime_zone = \"Asia/Tokyo\"", "default.zone", "Asia/Tokyo"),
        ("[profile]\npreset = \"flexible\"", "default.preset", "flexible"),
        ("[profile]\nowners = [1000, 1001]", "default.owners", "1000,1001"),
        ("[profile]\nmembers = [1002]", "default.members", "1002"),
        ("[[profiles]]\nname = \"kids\"\nclients = [\"aa:bb:cc:dd:ee:ff\"]\nmembers = [1001]", "kids.members", "1001"),
        ("[profile]\nunknown_devices = \"kids\"\n[[profiles]]\nname = \"kids\"\nclients = [\"AA-BB-CC-DD-EE-FF\"]", "unknownDevices", "kids"),
        ("[[profiles]]\nname = \"kids\"\nclients = [\"192.168.1.64/26\", \"fd00:1::/64\"]", "kids.clients", "192.168.1.64/26,fd00:1::/64"),
    ])
    func key_reaches_the_configuration(text: String, setting: String, expected: String) throws {
        let c = try parse(text)
        #expect(effective(c)[setting] == expected)
    }

    @Test func every_knob_can_be_set_on_its_own() throws {
        let c = try parse("""
            [profile]
            preset = "strict"
            [profile.knobs]
            cooldown = "3h"
            daily_earn_cap = "1h 30min"
            rollover_days = 2
            free_peeks_per_day = 3
            paid_peeks_per_day = 4
            paid_peek_cost = "90s"
            peek_length = "2min"
            tokens_per_month = 5
            token_length = "15min"
            earn_amount = "6min"
            earn_interval = "45min"
            starter_credit = "0"
            per_entry_wallets = true
            per_entry_daily_spend_cap = "20min"
            """)
        let knobs = try Knobs.resolve(preset: c.defaultProfile.preset, overrides: c.defaultProfile.overrides)
        let expected = Knobs(
            cooldown: .hours(3), dailyEarnCap: .minutes(90), rolloverDays: 2, freePeeksPerDay: 3,
            includedTokensPerMonth: 5, perEntryWallets: true, paidPeeksPerDay: 4, paidPeekCost: .seconds(90),
            peekLength: .minutes(2), tokenLength: .minutes(15), earnAmount: .minutes(6), earnInterval: .minutes(45),
            starterCredit: .zero, perEntryDailySpendCap: .minutes(20))
        #expect(knobs == expected)
        // The schema and the table agree: every knob of SPEC §6 has its key.
        #expect(Set(Knob.allCases.map(\.rawValue)).count == 14)
    }

    @Test func profile_inherits_zone_preset_and_knobs_from_the_default_profile_and_replaces_what_it_sets() throws {
        let c = try parse("""
            [profile]
            time_zone = "Europe/Berlin"
            preset = "balanced"
            owners = [1000]
            [profile.knobs]
            cooldown = "3h"
            free_peeks_per_day = 0

            [[profiles]]
            name = "kids"
            clients = ["192.168.1.64/26"]
            preset = "flexible"
            [profiles.knobs]
            free_peeks_per_day = 1

            [[profiles]]
            name = "guests"
            clients = ["10.9.0.0/16"]
            time_zone = "America/New_York"
            owners = []
            """)
        #expect(c.profiles.map(\.name) == ["kids", "guests"])
        let kids = c.profiles[0], guests = c.profiles[1]
        #expect(kids.timeZoneID == "Europe/Berlin")
        #expect(kids.preset == .flexible)
        #expect(kids.ownerUIDs == [1000])
        let kidsKnobs = try Knobs.resolve(preset: kids.preset, overrides: kids.overrides)
        #expect(kidsKnobs.cooldown == .hours(3)) // inherited
        #expect(kidsKnobs.freePeeksPerDay == 1) // its own
        #expect(kidsKnobs.includedTokensPerMonth == 3) // the flexible preset's
        #expect(guests.timeZoneID == "America/New_York")
        #expect(guests.preset == .balanced)
        #expect(guests.ownerUIDs == [])
        #expect(guests.clientCIDRs == ["10.9.0.0/16"])
    }

    @Test func empty_file_is_the_embedded_defaults() throws {
        let c = try parse("")
        #expect(effective(c) == effective(ConfigurationFile.embeddedDefaults(base: rootBase)))
        // The numbers SPEC §9 and §13 set for a root install.
        #expect(c.listen.map(\.description) == ["127.0.0.1:53", "[::1]:53"])
        #expect(c.blockedTTL == 10)
        #expect(c.blockingMode == .null)
        #expect(c.listRefreshPeriod == .hours(24))
        #expect(c.metricsListen == nil)
        #expect(c.rateLimit == nil)
        #expect(c.defaultProfile.preset == .strict)
        #expect(c.defaultProfile.timeZoneID == TimeZone.current.identifier)
    }

    @Test func empty_upstreams_are_read_from_resolv_conf_without_this_server() throws {
        let scratch = try Scratch()
        let resolv = try scratch.file("resolv.conf", "nameserver 127.0.0.1\nnameserver 192.0.2.53\n")
        let c = try parse("[dns]\nlisten = [\"127.0.0.1:53\"]\nupstreams = []\n", resolvConf: resolv)
        #expect(c.upstreams.map(\.description) == ["192.0.2.53:53"])
    }

    @Test func block_encrypted_dns_takes_the_doh_list_of_the_catalog() throws {
        let catalog = repositoryRoot + "/blocklists"
        let c = try parse("[dns]\nblock_encrypted_dns = true\n[lists]\ncatalog = \"\(catalog)\"\n")
        #expect(c.dohEndpointsPath == catalog + "/doh/encrypted-dns.list")
        let off = try parse("[dns]\nblock_encrypted_dns = false\n[lists]\ncatalog = \"\(catalog)\"\n")
        #expect(off.dohEndpointsPath == nil)
    }

    @Test func block_encrypted_dns_without_a_catalog_is_an_error_naming_the_key() throws {
        let found = problems("[dns]\nblock_encrypted_dns = true\n[lists]\ncatalog = \"/nonexistent/blocklists\"\n")
        let problem = try #require(found.first)
        #expect(problem.key == "dns.block_encrypted_dns")
        #expect(problem.line == 2)
    }

    @Test func quoted_keys_and_comments_do_not_confuse_lines() throws {
        let text = """
            # [dns] in a comment
            [dns] # the DNS side
            "blocked_ttl" = 10
            listen = [
              "127.0.0.1:53", # first
              # "bad" in a comment
              "[::1]:53",
            ]
            """
        let c = try parse(text)
        #expect(c.listen.count == 2)
    }
}

@Suite("Precedence: flags beat the file, the file beats the defaults")
struct PrecedenceTests {
    static let file = """
        [helper]
        state_dir = "/srv/file-state"
        log_level = "warning"
        [dns]
        listen = ["127.0.0.1:5353"]
        upstreams = ["192.0.2.1"]
        blocking_mode = "refused"
        cache_size = 777
        """

    @Test func a_flag_given_beats_the_file_and_the_file_beats_the_defaults() throws {
        var flags = ConfigurationOverrides()
        flags.listen = [try HostPort(parsing: "127.0.0.1:0")]
        flags.blockingMode = .nxdomain
        flags.stateDirectory = "/tmp/flag-state"
        let c = try parse(Self.file, overrides: flags)
        #expect(c.listen.map(\.description) == ["127.0.0.1:0"]) // flag
        #expect(c.blockingMode == .nxdomain) // flag
        #expect(c.paths.stateDirectory == "/tmp/flag-state") // flag
        #expect(c.upstreams.map(\.description) == ["192.0.2.1:53"]) // file
        #expect(c.cache.capacity == 777) // file
        #expect(c.logLevel == .warning) // file
        #expect(c.blockedTTL == 10) // default
        #expect(c.paths.controlSocket == rootBase.controlSocket) // default
    }

    @Test func no_flags_means_the_file() throws {
        let c = try parse(Self.file)
        #expect(c.listen.map(\.description) == ["127.0.0.1:5353"])
        #expect(c.blockingMode == .refused)
        #expect(c.paths.stateDirectory == "/srv/file-state")
    }

    @Test func every_override_is_applied() throws {
        var flags = ConfigurationOverrides()
        flags.controlSocket = "/tmp/c.sock"
        flags.upstreams = [try HostPort(parsing: "192.0.2.9", defaultPort: 53)]
        flags.threads = 2
        flags.upstreamTimeout = .milliseconds(300)
        flags.cacheSize = 12
        flags.logLevel = .error
        flags.catalogPath = "/opt/c"
        flags.dohEndpointsPath = "/opt/doh.list"
        let e = effective(try parse(Self.file, overrides: flags))
        #expect(e["controlSocket"] == "/tmp/c.sock")
        #expect(e["upstreams"] == "192.0.2.9:53")
        #expect(e["eventLoops"] == "2")
        #expect(e["forwarder"] == "300000000/600000000")
        #expect(e["cache"]?.hasPrefix("12 ") == true)
        #expect(e["logLevel"] == "error")
        #expect(e["catalogPath"] == "/opt/c")
        #expect(e["dohEndpointsPath"] == "/opt/doh.list")
    }

    @Test func missing_file_at_the_default_path_means_the_defaults() throws {
        var base = rootBase
        base.configFile = "/nonexistent/scrolloff.toml"
        let c = try ConfigurationFile.load(path: nil, base: base, resolvConf: noResolvConf)
        var expected = ConfigurationFile.embeddedDefaults(base: base)
        expected.upstreams = []
        #expect(effective(c) == effective(expected))
    }

    @Test func missing_file_named_explicitly_is_an_error() {
        do {
            _ = try ConfigurationFile.load(path: "/nonexistent/other.toml", base: rootBase)
            Issue.record("a missing --config file was accepted")
        } catch {
            guard case .unreadable(let path, let reason) = error else {
                Issue.record("\(error)")
                return
            }
            #expect(path == "/nonexistent/other.toml")
            #expect(reason.contains("no such file"))
        }
    }

    @Test func load_reads_the_file_it_is_given() throws {
        let scratch = try Scratch()
        let file = try scratch.file("s.toml", "[dns]\nblocked_ttl = 3\n")
        let c = try ConfigurationFile.load(path: file, base: rootBase, resolvConf: noResolvConf)
        #expect(c.blockedTTL == 3)
        #expect(c.paths.configFile == file)
    }
}

@Suite("The root helper takes its settings only from a file only it can change (SPEC §11)")
struct TrustedFileTests {
    @Test(arguments: [(0o644, true), (0o600, true), (0o664, false), (0o666, false), (0o646, false)] as [(Int, Bool)])
    func mode_decides(mode: Int, accepted: Bool) throws {
        let scratch = try Scratch()
        let file = try scratch.file("s.toml", "[dns]\nblocked_ttl = 4\n")
        try FileManager.default.setAttributes([.posixPermissions: mode], ofItemAtPath: file)
        // Group-writable passes only for group root; the scratch file's group is the test runner's.
        let groupIsRoot = (try FileManager.default.attributesOfItem(atPath: file)[.groupOwnerAccountID] as? Int) == 0
        let expected = accepted || (mode == 0o664 && groupIsRoot)
        do {
            let c = try ConfigurationFile.load(path: file, base: rootBase, resolvConf: noResolvConf, requireTrustedFile: true)
            #expect(expected, "mode \(String(mode, radix: 8)) was accepted")
            #expect(c.blockedTTL == 4)
        } catch {
            #expect(!expected, "mode \(String(mode, radix: 8)): \(error)")
            #expect(error.description.contains("chmod 644"))
        }
    }
}

@Suite("The root helper refuses a configuration file in a folder others could change (SPEC §11)")
struct TrustedConfigurationFolderTests {
    /// A folder another user owns, or one its group or anyone may write: either could swap the file.
    @Test(arguments: [(uid_t(65534), mode_t(0o755)), (0, 0o775), (0, 0o777)] as [(uid_t, mode_t)])
    func a_folder_others_can_change_is_refused_with_the_fix(owner: uid_t, mode: mode_t) throws {
        let scratch = try Scratch()
        let folder = scratch.path + "/etc"
        try FileManager.default.createDirectory(atPath: folder, withIntermediateDirectories: false)
        let file = folder + "/s.toml"
        try "[dns]\nblocked_ttl = 4\n".write(toFile: file, atomically: true, encoding: .utf8)
        chmod(file, 0o644)
        #expect(chown(folder, owner, 0) == 0)
        #expect(chmod(folder, mode) == 0)
        #expect(throws: ConfigurationError.self) {
            _ = try ConfigurationFile.load(path: file, base: rootBase, resolvConf: noResolvConf, requireTrustedFile: true)
        }
        do {
            _ = try ConfigurationFile.load(path: file, base: rootBase, resolvConf: noResolvConf, requireTrustedFile: true)
        } catch {
            #expect(error.description.contains("configuration file's folder"), "\(error)")
            #expect(error.description.contains("chown root:root \(folder)"), "\(error)")
        }
        // Made root's and 0755 again, the same file is read.
        #expect(chown(folder, 0, 0) == 0)
        #expect(chmod(folder, 0o755) == 0)
        let c = try ConfigurationFile.load(path: file, base: rootBase, resolvConf: noResolvConf, requireTrustedFile: true)
        #expect(c.blockedTTL == 4)
    }
}

@Suite("The root helper refuses a configuration file reached through a link others control (SPEC §11)")
struct TrustedConfigurationLinkTests {
    /// A link another user owns could be pointed at their own file before the next reload; a
    /// root's link that leads into another user's folder is as bad as the file being there.
    @Test func a_link_owned_by_another_user_or_leading_into_their_folder_is_refused_and_roots_link_to_roots_file_is_read() throws {
        let scratch = try Scratch()
        let file = try scratch.file("s.toml", "[dns]\nblocked_ttl = 4\n")
        chmod(file, 0o644)
        let theirLink = scratch.path + "/theirs.toml"
        #expect(symlink(file, theirLink) == 0 && lchown(theirLink, 65534, 65534) == 0)
        do {
            _ = try ConfigurationFile.load(path: theirLink, base: rootBase, resolvConf: noResolvConf, requireTrustedFile: true)
            Issue.record("a link owned by uid 65534 was followed")
        } catch {
            #expect(error.description.contains("symbolic link owned by uid 65534"), "\(error)")
        }

        let theirFolder = scratch.path + "/their-etc"
        try FileManager.default.createDirectory(atPath: theirFolder, withIntermediateDirectories: false)
        let theirFile = theirFolder + "/s.toml"
        try "[dns]\nblocked_ttl = 5\n".write(toFile: theirFile, atomically: true, encoding: .utf8)
        chmod(theirFile, 0o644)
        #expect(chown(theirFolder, 65534, 65534) == 0)
        let rootsLinkToTheirs = scratch.path + "/into-theirs.toml"
        #expect(symlink(theirFile, rootsLinkToTheirs) == 0)
        do {
            _ = try ConfigurationFile.load(path: rootsLinkToTheirs, base: rootBase, resolvConf: noResolvConf, requireTrustedFile: true)
            Issue.record("a link into a folder of uid 65534 was followed")
        } catch {
            #expect(error.description.contains("belongs to user nobody (uid 65534)"), "\(error)")
        }

        let rootsLink = scratch.path + "/roots.toml"
        #expect(symlink(file, rootsLink) == 0)
        #expect(try ConfigurationFile.load(path: rootsLink, base: rootBase, resolvConf: noResolvConf, requireTrustedFile: true).blockedTTL == 4)
    }
}
