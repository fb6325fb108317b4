import Testing
import TestSupport

/// The one command line of `scrolloff-dns start` the tests use: what each option becomes and the
/// order programs are stacked in front of the helper.
@Suite struct HelperLaunchTests {
    @Test func every_option_becomes_its_flag_once_after_start() {
        let launch = HelperLaunch(
            executable: "/h", listen: ["127.0.0.1:0", "[::1]:0"], upstreams: ["127.0.0.1:9", "127.0.0.1:10"], stateDirectory: "/s",
            controlSocket: "/c.sock", config: "/f.toml", mode: .both, webListen: "off", extra: ["--metrics", "127.0.0.1:0"])
        #expect(launch.arguments == [
            "start", "--config", "/f.toml", "--mode", "both", "--listen", "127.0.0.1:0", "--listen", "[::1]:0",
            "--upstream", "127.0.0.1:9", "--upstream", "127.0.0.1:10", "--state-dir", "/s", "--control-socket", "/c.sock",
            "--web-listen", "off", "--metrics", "127.0.0.1:0",
        ])
        #expect(launch.command == ["/h"] + launch.arguments, "no wrapper, no environment: the helper itself is spawned")
    }

    @Test func hosts_mode_without_listen_addresses_gives_no_listen_flag() {
        let launch = HelperLaunch(executable: "/h", listen: [], mode: .hosts)
        #expect(launch.arguments == ["start", "--mode", "hosts"])
    }

    /// The test's wrappers first, then the mode's user switch, then env right before the helper, so
    /// `prlimit` limits the user's helper and LD_PRELOAD reaches the helper, not a wrapper.
    @Test func wrappers_stack_outermost_first_and_the_environment_goes_right_before_the_helper() {
        var launch = HelperLaunch(
            executable: "/h", wrappers: [.namespace("soc-x"), .timeout(seconds: 20), .command(["/usr/bin/prlimit", "--nofile=9:9", "--"])],
            environment: ["TZ": "UTC", "FAKETIME": "@2026-11-28 06:30:00"], unsetEnvironment: ["SCROLLOFF_CATALOG"])
        launch.wrappers.append(.setpriv(["--reuid=65534"]))
        #expect(launch.command == [
            "/usr/sbin/ip", "netns", "exec", "soc-x", "/usr/bin/timeout", "20", "/usr/bin/prlimit", "--nofile=9:9", "--",
            "/usr/bin/setpriv", "--reuid=65534",
            "/usr/bin/env", "-u", "SCROLLOFF_CATALOG", "FAKETIME=@2026-11-28 06:30:00", "TZ=UTC",
            "/h", "start", "--listen", "127.0.0.1:0",
        ])
    }
}
