import Helper
import Testing

/// One file that must be refused, and what the one problem must say.
struct BadFile: Sendable, CustomTestStringConvertible {
    var name: String
    var text: String
    var key: String
    var line: Int
    /// A part of what is allowed, as the message must state it.
    var allowed: String
    var problem: String = ""
    var testDescription: String { name }
}

@Suite("Bad files: every problem names the key, the line and what is allowed")
struct BadFileTests {
    static let cases: [BadFile] = [
        BadFile(name: "blocked_ttl_30_is_above_10_seconds", text: "[dns]\nblocked_ttl = 30\n",
                key: "dns.blocked_ttl", line: 2, allowed: "1s to 10s", problem: "is 30"),
        BadFile(name: "blocked_ttl_with_milliseconds", text: "[dns]\nblocked_ttl = \"1500ms\"\n",
                key: "dns.blocked_ttl", line: 2, allowed: "1s to 10s", problem: "whole number of seconds"),
        BadFile(name: "cache_size_as_string", text: "[dns]\ncache_size = \"big\"\n",
                key: "dns.cache_size", line: 2, allowed: "1 to 10000000", problem: "the string \"big\""),
        BadFile(name: "blocking_mode_drop", text: "[dns]\n\nblocking_mode = \"drop\"\n",
                key: "dns.blocking_mode", line: 3, allowed: "null, nxdomain, refused"),
        BadFile(name: "listen_item_two_of_a_multiline_array_is_a_name",
                text: "[dns]\nlisten = [\n  \"127.0.0.1:53\",  # loopback\n  \"localhost:53\",\n]\n",
                key: "dns.listen[2]", line: 4, allowed: "ADDR:PORT", problem: "not a numeric"),
        BadFile(name: "listen_without_port", text: "[dns]\nlisten = [\"127.0.0.1\"]\n",
                key: "dns.listen[1]", line: 2, allowed: "ADDR:PORT", problem: "which has no port"),
        BadFile(name: "listen_empty", text: "[dns]\nlisten = []\n", key: "dns.listen", line: 2, allowed: "one or more"),
        BadFile(name: "listen_twice_the_same", text: "[dns]\nlisten = [\"127.0.0.1:53\", \"127.0.0.1:53\"]\n",
                key: "dns.listen[2]", line: 2, allowed: "each address once"),
        BadFile(name: "upstream_by_name", text: "[dns]\nupstreams = [\"dns.quad9.net\"]\n",
                key: "dns.upstreams[1]", line: 2, allowed: "numeric address"),
        BadFile(name: "upstream_is_this_server", text: "[dns]\nlisten = [\"127.0.0.1:53\"]\nupstreams = [\"127.0.0.1\"]\n",
                key: "dns.upstreams[1]", line: 3, allowed: "other than this helper", problem: "loop"),
        BadFile(name: "web_request_timeout_of_two_minutes_would_let_slow_clients_hold_the_page", text: "[web]\nrequest_timeout = \"2min\"\n",
                key: "web.request_timeout", line: 2, allowed: "1s to 60s"),
        BadFile(name: "web_sign_in_max_delay_of_a_day_would_lock_the_owner_out", text: "[web]\nsign_in_max_delay = \"1d\"\n",
                key: "web.sign_in_max_delay", line: 2, allowed: "1s to 1h"),
        BadFile(name: "upstream_timeout_10ms", text: "[dns]\nupstream_timeout = \"10ms\"\n",
                key: "dns.upstream_timeout", line: 2, allowed: "50ms to 30s"),
        BadFile(name: "unwanted_reply_threshold_negative", text: "[dns]\nunwanted_reply_threshold = -1\n",
                key: "dns.unwanted_reply_threshold", line: 2, allowed: "0 (never) to 65536 datagrams"),
        BadFile(name: "cache_min_ttl_above_max", text: "[dns]\ncache_min_ttl = \"30min\"\ncache_max_ttl = 600\n",
                key: "dns.cache_min_ttl", line: 2, allowed: "at most cache_max_ttl"),
        BadFile(name: "rate_limit_negative", text: "[dns]\nrate_limit = -1\n",
                key: "dns.rate_limit", line: 2, allowed: "0 (off)"),
        BadFile(name: "block_encrypted_dns_as_string", text: "[dns]\nblock_encrypted_dns = \"yes\"\n",
                key: "dns.block_encrypted_dns", line: 2, allowed: "true or false"),
        BadFile(name: "mode_unknown", text: "[helper]\nmode = \"firewall\"\n",
                key: "helper.mode", line: 2, allowed: "dns, hosts or both"),
        BadFile(name: "hosts_file_relative", text: "[helper]\nhosts_file = \"etc/hosts\"\n",
                key: "helper.hosts_file", line: 2, allowed: "absolute path"),
        BadFile(name: "threads_65", text: "[helper]\nthreads = 65\n", key: "helper.threads", line: 2, allowed: "0 (one per core) to 64"),
        BadFile(name: "log_level_verbose", text: "[helper]\nlog_level = \"verbose\"\n",
                key: "helper.log_level", line: 2, allowed: "trace, debug, info"),
        BadFile(name: "state_dir_relative", text: "[helper]\nstate_dir = \"var/lib\"\n",
                key: "helper.state_dir", line: 2, allowed: "absolute path"),
        BadFile(name: "control_socket_longer_than_a_unix_address",
                text: "[helper]\ncontrol_socket = \"/\(String(repeating: "s", count: 120))\"\n",
                key: "helper.control_socket", line: 2, allowed: "at most 107 bytes"),
        BadFile(name: "refresh_period_as_bare_number", text: "[lists]\nrefresh_period = 3600\n",
                key: "lists.refresh_period", line: 2, allowed: "15min to 30d", problem: "string with units"),
        BadFile(name: "refresh_period_5min_too_often", text: "[lists]\nrefresh_period = \"5min\"\n",
                key: "lists.refresh_period", line: 2, allowed: "15min to 30d"),
        BadFile(name: "refresh_period_not_a_length", text: "[lists]\nrefresh_period = \"daily\"\n",
                key: "lists.refresh_period", line: 2, allowed: "written with units"),
        BadFile(name: "list_source_name_with_spaces",
                text: "[[lists.source]]\nname = \"Bad Name!\"\nurl = \"https://example.org/x\"\n",
                key: "lists.source[1].name", line: 2, allowed: "a-z 0-9"),
        BadFile(name: "list_source_ftp_url", text: "[[lists.source]]\nurl = \"ftp://example.org/x\"\n",
                key: "lists.source[1].url", line: 2, allowed: "https://"),
        BadFile(name: "second_list_source_without_url_points_at_its_header",
                text: "[[lists.source]]\nurl = \"https://a.example/x\"\n\n[[lists.source]]\nname = \"b\"\n",
                key: "lists.source[2].url", line: 4, allowed: "https://", problem: "missing"),
        BadFile(name: "two_list_sources_with_one_name",
                text: "[[lists.source]]\nname = \"a\"\nurl = \"https://a.example/x\"\n[[lists.source]]\nname = \"a\"\nurl = \"https://b.example/x\"\n",
                key: "lists.source[2].name", line: 5, allowed: "one [[lists.source]] only"),
        BadFile(name: "metrics_listen_without_address", text: "[metrics]\nlisten = \"9153\"\n",
                key: "metrics.listen", line: 2, allowed: "ADDR:PORT"),
        BadFile(name: "time_zone_unknown", text: "[profile]\ntime_zone = \"Mars/Olympus\"\n",
                key: "profile.time_zone", line: 2, allowed: "IANA zone"),
        BadFile(name: "preset_lenient", text: "[profile]\npreset = \"lenient\"\n",
                key: "profile.preset", line: 2, allowed: "strict, balanced, flexible"),
        BadFile(name: "owner_uid_negative", text: "[profile]\nowners = [1000, -1]\n",
                key: "profile.owners[2]", line: 2, allowed: "0 to 4294967294"),
        BadFile(name: "cooldown_1min_below_5min", text: "[profile.knobs]\ncooldown = \"1min\"\n",
                key: "profile.knobs.cooldown", line: 2, allowed: "5 min to 7 days", problem: "is 1 min"),
        BadFile(name: "cooldown_in_an_inline_table", text: "[profile]\nknobs = { cooldown = \"1s\" }\n",
                key: "profile.knobs.cooldown", line: 2, allowed: "5 min to 7 days"),
        BadFile(name: "tokens_per_month_6_above_the_cap_of_5", text: "[profile.knobs]\ntokens_per_month = 6\n",
                key: "profile.knobs.tokens_per_month", line: 2, allowed: "0 to 5"),
        BadFile(name: "per_entry_wallets_as_number", text: "[profile.knobs]\nper_entry_wallets = 1\n",
                key: "profile.knobs.per_entry_wallets", line: 2, allowed: "true or false"),
        BadFile(name: "daily_earn_cap_without_unit", text: "[profile.knobs]\ndaily_earn_cap = 45\n",
                key: "profile.knobs.daily_earn_cap", line: 2, allowed: "0 s (no earning) to 24 h", problem: "string with units"),
        BadFile(name: "second_profile_cooldown_9_days",
                text: "[[profiles]]\nname = \"a\"\nclients = [\"10.0.0.0/8\"]\n\n[[profiles]]\nname = \"b\"\nclients = [\"192.168.0.0/16\"]\n[profiles.knobs]\ncooldown = \"9d\"\n",
                key: "profiles[2].knobs.cooldown", line: 9, allowed: "5 min to 7 days"),
        BadFile(name: "profile_client_prefix_33", text: "[[profiles]]\nname = \"kids\"\nclients = [\"10.0.0.0/33\"]\n",
                key: "profiles[1].clients[1]", line: 3, allowed: "192.168.1.0/24", problem: "prefix length"),
        BadFile(name: "unknown_devices_names_no_profile", text: "[profile]\nunknown_devices = \"kidz\"\n",
                key: "profile.unknown_devices", line: 2, allowed: "[[profiles]] table"),
        BadFile(name: "one_mac_in_two_profiles",
                text: "[[profiles]]\nname = \"a\"\nclients = [\"aa:bb:cc:dd:ee:ff\"]\n[[profiles]]\nname = \"b\"\nclients = [\"AA-BB-CC-DD-EE-FF\"]\n",
                key: "profiles[2].clients[1]", line: 6, allowed: "each claimed by one profile", problem: "already a client of profile a"),
        // SPEC §11: the router places `::ffff:10.0.0.5` as 10.0.0.5, so the two spellings are one client.
        BadFile(name: "an_ipv4_mapped_address_beside_its_ipv4_form_in_another_profile",
                text: "[[profiles]]\nname = \"a\"\nclients = [\"10.0.0.5\"]\n[[profiles]]\nname = \"b\"\nclients = [\"::ffff:10.0.0.5\"]\n",
                key: "profiles[2].clients[1]", line: 6, allowed: "each claimed by one profile", problem: "already a client of profile a"),
        BadFile(name: "profile_named_default", text: "[[profiles]]\nname = \"default\"\nclients = [\"10.0.0.1\"]\n",
                key: "profiles[1].name", line: 2, allowed: "not \"default\""),
        BadFile(name: "profile_without_clients", text: "[[profiles]]\nname = \"kids\"\n",
                key: "profiles[1].clients", line: 1, allowed: "192.168.1.0/24", problem: "missing"),
        BadFile(name: "network_claimed_by_two_profiles",
                text: "[[profiles]]\nname = \"a\"\nclients = [\"10.0.0.0/8\"]\n[[profiles]]\nname = \"b\"\nclients = [\"10.0.0.0/8\"]\n",
                key: "profiles[2].clients[1]", line: 6, allowed: "each claimed by one profile", problem: "profile a"),
        BadFile(name: "dns_as_a_number", text: "dns = 5\n", key: "dns", line: 1, allowed: "[dns] section"),
        BadFile(name: "tcp_per_client_above_the_total", text: "[dns]\ntcp_connections = 10\ntcp_connections_per_client = 20\n",
                key: "dns.tcp_connections_per_client", line: 3, allowed: "at most tcp_connections", problem: "more than tcp_connections (10)"),
        BadFile(name: "tcp_unsent_bytes_too_small", text: "[dns]\ntcp_unsent_bytes = 100\n",
                key: "dns.tcp_unsent_bytes", line: 2, allowed: "4096 to 67108864 bytes"),
        BadFile(name: "control_per_user_above_the_total", text: "[helper]\ncontrol_connections = 4\ncontrol_connections_per_user = 8\n",
                key: "helper.control_connections_per_user", line: 3, allowed: "at most control_connections"),
    ]

    @Test(arguments: cases)
    func names_key_line_and_what_is_allowed(_ bad: BadFile) throws {
        let found = problems(bad.text)
        #expect(found.count == 1, "\(found)")
        let problem = try #require(found.first)
        #expect(problem.key == bad.key)
        #expect(problem.line == bad.line)
        #expect(problem.allowed?.contains(bad.allowed) == true, "allowed: \(problem.allowed ?? "nil")")
        #expect(bad.problem.isEmpty || problem.problem.contains(bad.problem), "problem: \(problem.problem)")
    }

    @Test func every_problem_is_reported_in_line_order_not_just_the_first() {
        let text = """
            [profile.knobs]
            cooldown = "1min"
            tokens_per_month = 9

            [dns]
            blocked_ttl = 60
            cache_size = 0
            """
        let found = problems(text)
        #expect(found.map(\.key) == ["profile.knobs.cooldown", "profile.knobs.tokens_per_month", "dns.blocked_ttl", "dns.cache_size"])
        #expect(found.map(\.line) == [2, 3, 6, 7])
    }

    @Test func the_error_message_names_file_line_key_and_allowed_values() {
        do {
            _ = try parse("[dns]\nblocked_ttl = 30\n")
            Issue.record("a TTL of 30 s was accepted")
        } catch {
            #expect(error.description.contains("test.toml:2: dns.blocked_ttl is 30; allowed: 1s to 10s"), "\(error)")
        }
    }
}

@Suite("Unknown keys and syntax errors")
struct UnknownKeyTests {
    @Test(arguments: [
        ("[dns]\nblocked_tll = 5\n", "dns.blocked_tll", 2, "did you mean blocked_ttl?"),
        ("[dns]\n\nlisen = [\"127.0.0.1:53\"]\n", "dns.lisen", 3, "did you mean listen?"),
        ("[helper]\nlisten = [\"127.0.0.1:53\"]\n", "helper.listen", 2, "did you mean [dns] listen?"),
        ("[profle]\npreset = \"strict\"\n", "profle", 1, "did you mean profile?"),
        ("[profile.knobs]\ncooldwn = \"2h\"\n", "profile.knobs.cooldwn", 2, "did you mean cooldown?"),
        ("[[profiles]]\nname = \"a\"\nclients = [\"10.0.0.1\"]\nzone = \"UTC\"\n", "profiles[1].zone", 4, "is not a setting of [profiles]"),
    ])
    func unknown_key_is_an_error_with_the_nearest_known_key(text: String, key: String, line: Int, hint: String) throws {
        let found = problems(text)
        let problem = try #require(found.first)
        #expect(found.count == 1, "\(found)")
        #expect(problem.key == key)
        #expect(problem.line == line)
        #expect(problem.problem.contains(hint), "\(problem.problem)")
        #expect(problem.allowed?.isEmpty == false)
    }

    @Test(arguments: [
        ("[dns]\nblocked_ttl = = 3\n", 2),
        ("[dns]\nlisten = [\"127.0.0.1:53\"\n\n[helper]\n", 4),
        ("[dns\n", 1),
        ("[dns]\nblocked_ttl = 3\n[dns]\n", 3),
    ])
    func syntax_error_names_the_line(text: String, line: Int) {
        do {
            _ = try parse(text)
            Issue.record("accepted: \(text)")
        } catch {
            guard case .syntax(let path, let reported, _, let message) = error else {
                Issue.record("not a syntax error: \(error)")
                return
            }
            #expect(path == "test.toml")
            #expect(reported == line, "\(message)")
            #expect(!message.isEmpty)
        }
    }
}
