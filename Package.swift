// swift-tools-version:6.1
// Scroll Off for networks. Module layout and rationale: docs/architecture.md and DEVELOPERS.md.
import PackageDescription

let swiftSettings: [SwiftSetting] = [
    .swiftLanguageMode(.v6),
    .enableUpcomingFeature("ExistentialAny"),
]

/// How the two programs are linked. Why: the helper's resident memory with no list was mostly the
/// pages of its own file, and these cut what the loader and the code touch without changing what
/// runs (docs/benchmarks.md, "The baseline, cut at the link").
/// - lld with packed relative relocations (DT_RELR, glibc 2.36): the position-independent binary's
///   ~130,000 relative relocations take 28 KiB instead of the 3.1 MB the loader read at every start.
/// - No exported symbol table: the static Swift runtime's link arguments export every symbol
///   (`-export-dynamic` in the toolchain's static-stdlib-args.lnk); nothing looks these programs'
///   symbols up by name (each `dlsym` here asks for a libc function), and the table cost 1.9 MB
///   resident.
/// - Release: each function in its own section (Makefile RELEASE_FLAGS) and the helper's functions
///   placed in the order they first run, from `scripts/link-order/scrolloff-dns.txt` (written by
///   scripts/link-order.sh), so its working code shares a few MiB of pages instead of being spread
///   over 30 MB. Names missing from a stale order are skipped, not an error.
/// The test bundle, which links the executables' modules, gets the first two as well, so the tests
/// run code linked like the installed programs.
let programLinkerFlags = ["-use-ld=lld", "-Xlinker", "-z", "-Xlinker", "pack-relative-relocs", "-Xlinker", "--no-export-dynamic"]
func linkerSettings(order: String? = nil) -> [LinkerSetting] {
    var settings: [LinkerSetting] = [.unsafeFlags(programLinkerFlags)]
    if let order {
        let file = Context.packageDirectory + "/scripts/link-order/" + order
        settings.append(.unsafeFlags(["-Xlinker", "--symbol-ordering-file=" + file, "-Xlinker", "--no-warn-symbol-ordering"],
                                     .when(configuration: .release)))
    }
    return settings
}

let package = Package(
    name: "scrolloff",
    platforms: [.macOS(.v15)],
    products: [
        .executable(name: "scrolloff", targets: ["scrolloff-cli"]),
        .executable(name: "scrolloff-dns", targets: ["scrolloff-dns"]),
    ],
    dependencies: [
        .package(url: "https://github.com/apple/swift-argument-parser.git", from: "1.8.2"),
        .package(url: "https://github.com/apple/swift-log.git", from: "1.16.2"),
        .package(url: "https://github.com/apple/swift-nio.git", from: "2.101.2"),
        .package(url: "https://github.com/swift-server/swift-service-lifecycle.git", from: "2.13.0"),
        .package(url: "https://github.com/groue/GRDB.swift.git", from: "7.10.0"),
        .package(url: "https://github.com/x-sheep/swift-property-based.git", from: "2.0.1"),
        .package(url: "https://github.com/LebJe/TOMLKit.git", from: "0.6.0"),
        .package(url: "https://github.com/swift-server/swift-prometheus.git", from: "2.4.1"),
        .package(url: "https://github.com/hummingbird-project/hummingbird.git", from: "2.28.1"),
        .package(url: "https://github.com/hummingbird-project/swift-mustache.git", from: "2.1.1"),
        .package(url: "https://github.com/apple/swift-crypto.git", from: "3.12.3"),
        // [store] backend = "postgresql": two helpers of one household on one database (SPEC §12a).
        .package(url: "https://github.com/vapor/postgres-nio.git", from: "1.33.2"),
        // TLS to the household database (`sslmode`), through the NIOSSL postgres-nio itself uses.
        .package(url: "https://github.com/apple/swift-nio-ssl.git", from: "2.37.6"),
    ],
    targets: [
        // Pure rules: no networking, no SQLite, no wall clock. Everything is a function of (state, time).
        .target(name: "ScrollOffCore", swiftSettings: swiftSettings),
        // DNS message codec: total, bounded parser and serializer. Pure bytes in, values out.
        .target(name: "DNSWire", swiftSettings: swiftSettings),
        // List formats, the compact domain matcher and the curated catalog loader.
        .target(name: "DomainLists", swiftSettings: swiftSettings),
        // libcurl through the Debian package; the shim wraps variadic curl_easy_setopt.
        .systemLibrary(name: "CCurl", pkgConfig: "libcurl", providers: [.apt(["libcurl4-openssl-dev"])]),
        .target(name: "CCurlShim", dependencies: ["CCurl"]),
        // sched_setattr(2), sched_getaffinity(2) and thread names, which Swift's Glibc module lacks.
        .target(name: "CThreadShim"),
        // recvmmsg/sendmmsg batches for the UDP listener (the Glibc module does not import them).
        .target(name: "CDatagramShim"),
        .target(name: "ListFetch", dependencies: ["CCurlShim", "CThreadShim", "ScrollOffCore", "DomainLists"], swiftSettings: swiftSettings),
        // SQLite state through GRDB on the system libsqlite3: schema, ledger, events, rollups.
        .target(
            name: "Store",
            dependencies: ["ScrollOffCore", .product(name: "GRDB", package: "GRDB.swift")],
            swiftSettings: swiftSettings
        ),
        // The same state on a PostgreSQL server that several helpers share (docs/operations.md):
        // its own versioned schema, row locks for the one-at-a-time rules, LISTEN/NOTIFY so each
        // helper reloads within a second. SQLite (`Store`) stays the default.
        .target(
            name: "PostgresStore",
            dependencies: [
                "Store", "ScrollOffCore",
                .product(name: "PostgresNIO", package: "postgres-nio"),
                .product(name: "NIOSSL", package: "swift-nio-ssl"),
                .product(name: "Logging", package: "swift-log"),
                .product(name: "NIOCore", package: "swift-nio"),
                .product(name: "NIOPosix", package: "swift-nio"),
            ],
            swiftSettings: swiftSettings
        ),
        // Appends ledger rows in a loop for the kill -9 consistency test of StoreTests.
        .executableTarget(name: "store-crash-probe", dependencies: ["Store", "ScrollOffCore"], swiftSettings: swiftSettings),
        // The control API's contract, shared by helper and CLI: the route table, query keys,
        // refusal rules, wire types, default paths. No transport: the helper serves it
        // (ControlServer), the CLI calls it (ControlTransport).
        .target(name: "ControlAPI", dependencies: ["ScrollOffCore"], swiftSettings: swiftSettings),
        // The CLI's side of the control socket: the blocking Unix-socket client (SwiftNIO's HTTP/1
        // codec on an embedded channel, no threads), its errors and the server-identity check.
        .target(
            name: "ControlTransport",
            dependencies: [
                "ControlAPI",
                .product(name: "NIOCore", package: "swift-nio"),
                .product(name: "NIOEmbedded", package: "swift-nio"),
                .product(name: "NIOHTTP1", package: "swift-nio"),
            ],
            swiftSettings: swiftSettings
        ),
        // `scrolloff doctor`'s verdicts (SPEC §11; not `Doctor`, the CLI's command of that name): pure functions from the helper's facts
        // (ControlAPI's `DoctorFacts`) and the system's resolver setup to PASS / WARN / FAIL lines.
        .target(name: "DoctorChecks", dependencies: ["ControlAPI", "ControlTransport", "ScrollOffCore"], swiftSettings: swiftSettings),
        // The DNS-over-TCP length-prefix framer (RFC 7766 §8), on its own so the fuzz target can
        // drive it without building the sinkhole (and all of NIOPosix) with sanitizers.
        .target(
            name: "DNSFraming",
            dependencies: [.product(name: "NIOCore", package: "swift-nio")],
            swiftSettings: swiftSettings
        ),
        // The managed section of /etc/hosts (SPEC §10): byte-exact split, render, atomic writer.
        .target(name: "HostsFile", swiftSettings: swiftSettings),
        // Who holds a port the helper could not bind (/proc/net and /proc/PID/fd), for the listen
        // error's advice. Apart from Sinkhole: it reads /proc, never a packet.
        .target(name: "PortDiagnostics", dependencies: ["DNSWire"], swiftSettings: swiftSettings),
        // Sockets to the upstream resolvers: pooled UDP sockets per event loop, TCP exchanges, reply
        // matching (RFC 5452, 0x20), health and back-off. The Forwarder link (Sinkhole) asks through it.
        .target(
            name: "Upstream",
            dependencies: [
                "DNSWire", "DNSFraming",
                .product(name: "NIOConcurrencyHelpers", package: "swift-nio"),
                .product(name: "NIOCore", package: "swift-nio"),
                .product(name: "NIOPosix", package: "swift-nio"),
            ],
            swiftSettings: swiftSettings
        ),
        // The UDP listeners (recvmmsg threads), SwiftNIO TCP server, query gate, resolver chain, forwarder, cache.
        // Chain/ is the chain and what every link shares, Links/NAME one folder per link, Transport/ the listeners.
        .target(
            name: "Sinkhole",
            dependencies: [
                "DNSWire", "DNSFraming", "ScrollOffCore", "DomainLists", "CDatagramShim", "CThreadShim", "PortDiagnostics", "Upstream",
                .product(name: "NIOConcurrencyHelpers", package: "swift-nio"),
                .product(name: "NIOCore", package: "swift-nio"),
                .product(name: "NIOPosix", package: "swift-nio"),
                .product(name: "Logging", package: "swift-log"),
                .product(name: "ServiceLifecycle", package: "swift-service-lifecycle"),
            ],
            swiftSettings: swiftSettings
        ),
        // Work off the event loops: SCHED_IDLE threads for parses and frees (`LowPriorityWork`,
        // `Retirement`), so queries are answered while a large list is read or dropped.
        .target(
            name: "LowPriority",
            dependencies: [
                "CThreadShim", "DomainLists", "ListFetch",
                .product(name: "ServiceLifecycle", package: "swift-service-lifecycle"),
            ],
            swiftSettings: swiftSettings
        ),
        // The per-query decision (SPEC §9): the published enforcement, client routing by address,
        // network and MAC, the policy the resolver chain asks, and urge recording (SPEC §7).
        .target(
            name: "Enforcement",
            dependencies: [
                "ScrollOffCore", "DomainLists", "DNSWire", "Sinkhole", "ListFetch", "LowPriority", "CThreadShim",
                .product(name: "NIOConcurrencyHelpers", package: "swift-nio"),
            ],
            swiftSettings: swiftSettings
        ),
        // The rules engine (SPEC §1–§8, §11, §12): the one actor that owns the household's state,
        // applies every command under the rules of ScrollOffCore, commits to the Store and publishes
        // the enforcement the DNS path reads.
        .target(
            name: "Engine",
            dependencies: [
                "ScrollOffCore", "DomainLists", "Enforcement", "LowPriority", "ListFetch", "Store", "ControlAPI", "Sinkhole",
                .product(name: "Logging", package: "swift-log"),
                .product(name: "ServiceLifecycle", package: "swift-service-lifecycle"),
            ],
            swiftSettings: swiftSettings
        ),
        // What every long-running part of the helper shares: the HTTP/1 listener and its protocol
        // handlers, transfer codings, the change signal, runtime paths, start and reload errors.
        .target(
            name: "ServiceKit",
            dependencies: [
                "ControlAPI",
                "CThreadShim",
                "Sinkhole",
                .product(name: "Logging", package: "swift-log"),
                .product(name: "ServiceLifecycle", package: "swift-service-lifecycle"),
                .product(name: "NIOCore", package: "swift-nio"),
                .product(name: "NIOHTTP1", package: "swift-nio"),
                .product(name: "NIOPosix", package: "swift-nio"),
                .product(name: "Hummingbird", package: "hummingbird"),
                .product(name: "HummingbirdCore", package: "hummingbird"),
            ],
            swiftSettings: swiftSettings
        ),
        // The optional nftables table that closes DNS bypasses (SPEC §9b): rules, controller, service.
        .target(
            name: "Firewall",
            dependencies: [
                "ControlAPI",
                "DNSWire",
                "Engine",
                "ScrollOffCore",
                "ServiceKit",
                "Sinkhole",
                "Store",
                .product(name: "Logging", package: "swift-log"),
                .product(name: "ServiceLifecycle", package: "swift-service-lifecycle"),
                .product(name: "NIOCore", package: "swift-nio"),
            ],
            swiftSettings: swiftSettings
        ),
        // hosts mode (SPEC §10): the managed section of /etc/hosts kept in step with the rules.
        .target(
            name: "HostsMode",
            dependencies: [
                "ControlAPI",
                "DomainLists",
                "Enforcement",
                "Engine",
                "HostsFile",
                "ScrollOffCore",
                "ServiceKit",
                "Sinkhole",
                "Store",
                .product(name: "Logging", package: "swift-log"),
                .product(name: "ServiceLifecycle", package: "swift-service-lifecycle"),
            ],
            swiftSettings: swiftSettings
        ),
        // The control socket's server (SPEC §13): routes, who may call them, list lifecycle, doctor.
        .target(
            name: "ControlServer",
            dependencies: [
                "ControlAPI",
                "DNSWire",
                "DomainLists",
                "Enforcement",
                "Engine",
                "Firewall",
                "HostsMode",
                "ListFetch",
                "LowPriority",
                "ScrollOffCore",
                "ServiceKit",
                "Sinkhole",
                "Store",
                .product(name: "Logging", package: "swift-log"),
                .product(name: "ServiceLifecycle", package: "swift-service-lifecycle"),
                .product(name: "NIOCore", package: "swift-nio"),
                .product(name: "NIOHTTP1", package: "swift-nio"),
                .product(name: "NIOPosix", package: "swift-nio"),
                .product(name: "Hummingbird", package: "hummingbird"),
                .product(name: "HummingbirdCore", package: "hummingbird"),
            ],
            swiftSettings: swiftSettings
        ),
        // The household page (SPEC §9a; its main type is HouseholdWeb): templates, sessions, sign-in, forms over the same engine.
        .target(
            name: "HouseholdPage",
            dependencies: [
                "ControlAPI",
                "ControlServer",
                "Engine",
                "Enforcement",
                "PortDiagnostics",
                "ScrollOffCore",
                "ServiceKit",
                "Sinkhole",
                "Store",
                .product(name: "Logging", package: "swift-log"),
                .product(name: "ServiceLifecycle", package: "swift-service-lifecycle"),
                .product(name: "NIOCore", package: "swift-nio"),
                .product(name: "Mustache", package: "swift-mustache"),
                .product(name: "Crypto", package: "swift-crypto"),
                .product(name: "_CryptoExtras", package: "swift-crypto"),
                .product(name: "Hummingbird", package: "hummingbird"),
                .product(name: "HummingbirdCore", package: "hummingbird"),
            ],
            swiftSettings: swiftSettings
        ),
        // The configuration file (SPEC §13 check-config): TOML sections, their checks and defaults,
        // and the helper's whole configuration value; the reload that applies it is Helper's.
        .target(
            name: "Config",
            dependencies: [
                "ControlServer", "Enforcement", "Engine", "Firewall", "HouseholdPage", "ListFetch", "ScrollOffCore", "ServiceKit",
                "Sinkhole", "Store", "PostgresStore", "DomainLists",
                .product(name: "Logging", package: "swift-log"),
                .product(name: "NIOCore", package: "swift-nio"),
                .product(name: "TOMLKit", package: "TOMLKit"),
            ],
            swiftSettings: swiftSettings
        ),
        // Wiring of the long-running services of the root helper.
        .target(
            name: "Helper",
            dependencies: [
                "ScrollOffCore", "Sinkhole", "DomainLists", "Store", "ControlAPI", "ListFetch", "DNSWire", "HostsFile",
                "CThreadShim", "LowPriority", "Enforcement", "Engine", "ServiceKit", "Firewall", "HostsMode", "ControlServer", "HouseholdPage", "Config",
                "PostgresStore",
                .product(name: "NIOHTTP1", package: "swift-nio"),
                .product(name: "Prometheus", package: "swift-prometheus"),
                .product(name: "Logging", package: "swift-log"),
                .product(name: "ServiceLifecycle", package: "swift-service-lifecycle"),
                .product(name: "UnixSignals", package: "swift-service-lifecycle"),
                .product(name: "NIOCore", package: "swift-nio"),
                .product(name: "NIOPosix", package: "swift-nio"),
                .product(name: "TOMLKit", package: "TOMLKit"),
                .product(name: "Hummingbird", package: "hummingbird"),
                .product(name: "HummingbirdCore", package: "hummingbird"),
                .product(name: "Mustache", package: "swift-mustache"),
                .product(name: "Crypto", package: "swift-crypto"),
                .product(name: "_CryptoExtras", package: "swift-crypto"),
            ],
            swiftSettings: swiftSettings
        ),
        // The helper, and the CLI as well when it is run under the name `scrolloff`: installed,
        // `scrolloff` is a link to `scrolloff-dns`, so the Swift runtime, Foundation and ICU that
        // each program links statically are installed once (docs/benchmarks.md, "Installed size").
        .executableTarget(
            name: "scrolloff-dns",
            dependencies: [
                "Helper", "Engine", "ServiceKit", "Firewall", "HostsMode", "ControlServer", "HouseholdPage", "Config", "Sinkhole", "ControlAPI",
                "ControlTransport", "Store", "HostsFile", "PostgresStore", "scrolloff",
                .product(name: "ArgumentParser", package: "swift-argument-parser"),
                .product(name: "Logging", package: "swift-log"),
                .product(name: "NIOCore", package: "swift-nio"),
            ],
            swiftSettings: swiftSettings,
            linkerSettings: linkerSettings(order: "scrolloff-dns.txt")
        ),
        // The CLI's verbs and its entry (`ScrollOffCLI.main`), a library so that `scrolloff-dns` links it too.
        .target(
            name: "scrolloff",
            dependencies: [
                "ScrollOffCore", "ControlAPI", "ControlTransport", "DoctorChecks", "DNSWire",
                .product(name: "ArgumentParser", package: "swift-argument-parser"),
            ],
            swiftSettings: swiftSettings
        ),
        // The `scrolloff` program on its own, as the tests and `make run` users run it from .build.
        .executableTarget(
            name: "scrolloff-cli",
            dependencies: ["scrolloff"],
            swiftSettings: swiftSettings,
            linkerSettings: linkerSettings()
        ),
        // libFuzzer target for DNSWire and the TCP framer: `make fuzz`; a plain build replays saved inputs instead.
        .executableTarget(
            name: "DNSWireFuzz",
            dependencies: ["DNSWire", "DNSFraming", .product(name: "NIOCore", package: "swift-nio")],
            swiftSettings: swiftSettings),
        // libFuzzer target for the control API's decoding (request bodies of every endpoint, queries,
        // path ids, the page's forms): `make fuzz`; a plain build replays saved inputs instead.
        .executableTarget(
            name: "ControlAPIFuzz",
            dependencies: ["ControlAPI", "ScrollOffCore"],
            swiftSettings: swiftSettings),
        // Micro-benchmarks for the hot path; run by bench/*.sh in release mode, never by `make test`.
        .executableTarget(
            name: "scrolloff-bench",
            dependencies: [
                "ScrollOffCore", "DomainLists", "DNSWire", "HostsFile", "Sinkhole", "Helper", "Engine", "Enforcement", "ControlServer", "HostsMode",
                .product(name: "NIOCore", package: "swift-nio"),
                .product(name: "NIOPosix", package: "swift-nio"),
                .product(name: "Logging", package: "swift-log"),
            ],
            path: "bench/Sources/scrolloff-bench",
            swiftSettings: swiftSettings
        ),

        // Helpers shared by test targets (which cannot import one another): a capturing log handler, a
        // seeded random generator.
        // Only test targets depend on it; no product links it.
        .target(
            name: "TestSupport",
            dependencies: [.product(name: "Logging", package: "swift-log")],
            path: "Tests/TestSupport",
            swiftSettings: swiftSettings
        ),
        .testTarget(
            name: "ScrollOffCoreTests",
            dependencies: ["ScrollOffCore", .product(name: "PropertyBased", package: "swift-property-based")],
            swiftSettings: swiftSettings
        ),
        .testTarget(
            name: "HostsFileTests",
            dependencies: ["HostsFile", .product(name: "PropertyBased", package: "swift-property-based")],
            swiftSettings: swiftSettings
        ),
        .testTarget(name: "DNSWireTests", dependencies: ["DNSWire", "TestSupport"], exclude: ["corpus", "fuzz.dict"], swiftSettings: swiftSettings),
        .testTarget(name: "DomainListsTests", dependencies: ["DomainLists", "TestSupport"], resources: [.copy("Fixtures")], swiftSettings: swiftSettings),
        .testTarget(name: "ListFetchTests", dependencies: ["ListFetch", "CThreadShim", "ScrollOffCore"], resources: [.copy("Resources")], swiftSettings: swiftSettings),
        .testTarget(
            name: "SinkholeTests",
            dependencies: [
                "Sinkhole", "Upstream", "DNSFraming", "DNSWire", "DomainLists", "TestSupport", "PortDiagnostics",
                .product(name: "Logging", package: "swift-log"),
                .product(name: "NIOCore", package: "swift-nio"),
                .product(name: "NIOPosix", package: "swift-nio"),
                .product(name: "NIOEmbedded", package: "swift-nio"),
                .product(name: "NIOTestUtils", package: "swift-nio"),
            ],
            swiftSettings: swiftSettings
        ),
        // One test target per module.
        .testTarget(
            name: "UpstreamTests",
            dependencies: ["Upstream", "DNSWire", .product(name: "NIOCore", package: "swift-nio"), .product(name: "NIOPosix", package: "swift-nio")],
            swiftSettings: swiftSettings),
        .testTarget(name: "EnforcementTests", dependencies: ["Enforcement", "DomainLists"], swiftSettings: swiftSettings),
        .testTarget(
            name: "FirewallTests",
            dependencies: ["Firewall", "ServiceKit", "Sinkhole", .product(name: "Logging", package: "swift-log"),
                           .product(name: "ServiceLifecycle", package: "swift-service-lifecycle")],
            swiftSettings: swiftSettings),
        .testTarget(name: "HostsModeTests", dependencies: ["HostsMode", .product(name: "Logging", package: "swift-log")], swiftSettings: swiftSettings),
        .testTarget(
            name: "HouseholdPageTests",
            dependencies: ["HouseholdPage", "Sinkhole", .product(name: "NIOCore", package: "swift-nio")],
            swiftSettings: swiftSettings),
        .testTarget(
            name: "LowPriorityTests",
            dependencies: ["LowPriority", "ControlAPI", "ControlServer", "DomainLists", "Engine", "ListFetch", "ScrollOffCore",
                           .product(name: "Logging", package: "swift-log")],
            swiftSettings: swiftSettings),
        .testTarget(name: "ServiceKitTests", dependencies: ["ServiceKit", "LowPriority", "CThreadShim"], swiftSettings: swiftSettings),
        .testTarget(name: "PortDiagnosticsTests", dependencies: ["PortDiagnostics", "DNSWire"], swiftSettings: swiftSettings),
        .testTarget(name: "StoreTests", dependencies: ["Store", "ScrollOffCore", .product(name: "GRDB", package: "GRDB.swift")], swiftSettings: swiftSettings),
        .testTarget(
            name: "HelperTests",
            dependencies: [
                "Helper", "Engine", "ServiceKit", "Firewall", "HostsMode", "ControlServer", "HouseholdPage", "Config", "Enforcement", "LowPriority", "CThreadShim", "ControlAPI",
                "DoctorChecks", "ListFetch", "Store", "DomainLists", "ScrollOffCore", "Sinkhole", "TestSupport",
                .product(name: "Logging", package: "swift-log"),
                .product(name: "NIOCore", package: "swift-nio"),
                .product(name: "NIOPosix", package: "swift-nio"),
                .product(name: "ServiceLifecycle", package: "swift-service-lifecycle"),
            ],
            swiftSettings: swiftSettings
        ),
        // The engine with its fixtures (EngineTestSupport): its commands, capability types, and the
        // modules that act through it (hosts mode's names, the household page's service, list builds).
        .testTarget(
            name: "EngineTests",
            dependencies: [
                "Helper", "Engine", "ServiceKit", "Firewall", "HostsMode", "ControlServer", "HouseholdPage", "Config", "Enforcement", "LowPriority", "CThreadShim", "ControlAPI",
                "DoctorChecks", "ListFetch", "Store", "DomainLists", "ScrollOffCore", "Sinkhole", "TestSupport",
                .product(name: "Logging", package: "swift-log"),
                .product(name: "NIOCore", package: "swift-nio"),
                .product(name: "NIOPosix", package: "swift-nio"),
                .product(name: "ServiceLifecycle", package: "swift-service-lifecycle"),
            ],
            swiftSettings: swiftSettings
        ),
        // The configuration file: parsing tables, precedence, the shipped sample, and check-config
        // through the real binary (the dependency builds it).
        .testTarget(
            name: "ConfigurationTests",
            dependencies: ["Helper", "Engine", "ServiceKit", "Firewall", "HostsMode", "ControlServer", "HouseholdPage", "Config", "ScrollOffCore", "Sinkhole", "Store", "TestSupport", "scrolloff-dns"],
            swiftSettings: swiftSettings
        ),
        .testTarget(name: "ControlAPITests", dependencies: ["ControlAPI", "ScrollOffCore"], exclude: ["corpus", "fuzz.dict"], swiftSettings: swiftSettings),
        // The CLI's client: request bytes, SwiftNIO's codec as it is wired, errors and exit codes.
        .testTarget(
            name: "ControlTransportTests",
            dependencies: ["ControlTransport", "ControlAPI", .product(name: "NIOHTTP1", package: "swift-nio")],
            swiftSettings: swiftSettings
        ),
        // `doctor`'s verdicts and the resolver-setup readers, without a helper or a network.
        .testTarget(name: "DoctorChecksTests", dependencies: ["DoctorChecks", "ControlAPI", "ControlTransport", "ScrollOffCore"], swiftSettings: swiftSettings),
        .testTarget(
            name: "ControlEndToEndTests",
            dependencies: [
                "Helper", "Engine", "ServiceKit", "Firewall", "HostsMode", "ControlServer", "HouseholdPage", "Config", "Enforcement", "ControlAPI",
                "ControlTransport", "ListFetch", "DomainLists", "ScrollOffCore", "Sinkhole", "Store", "TestSupport",
                .product(name: "Logging", package: "swift-log"),
                .product(name: "ServiceLifecycle", package: "swift-service-lifecycle"),
            ],
            swiftSettings: swiftSettings
        ),
        // The metrics counters and exposition and the log line format, without a running helper.
        .testTarget(
            name: "MetricsTests",
            dependencies: [
                "Helper", "Engine", "ServiceKit", "Firewall", "HostsMode", "ControlServer", "HouseholdPage", "Config", "Sinkhole",
                .product(name: "Logging", package: "swift-log"),
                .product(name: "NIOCore", package: "swift-nio"),
                .product(name: "NIOPosix", package: "swift-nio"),
            ],
            swiftSettings: swiftSettings
        ),
        // Runs the real scrolloff-dns binary; the dependency makes `swift build --build-tests` build it.
        // ControlAPI for the route table, which the control API's bounds test goes over.
        // The documents: SPEC § citations resolve in docs/spec.md, links stay inside the repository,
        // docs/cli.md names every verb of the two programs (their command trees, hence the two).
        .testTarget(
            name: "DocsTests",
            dependencies: ["scrolloff", "scrolloff-dns", .product(name: "ArgumentParser", package: "swift-argument-parser")],
            swiftSettings: swiftSettings),
        // Two helpers of one household on a real PostgreSQL (SPEC §12a): the shared store, its
        // faults and a seeded randomized run; each test starts its own server (TestPostgres).
        .testTarget(
            name: "SharedStoreTests",
            dependencies: [
                "Engine", "Enforcement", "DomainLists", "PostgresStore", "Store", "ScrollOffCore", "TestSupport",
                .product(name: "Logging", package: "swift-log"),
                // The lists controller of a helper on the shared store (SharedHouseholdListsTests).
                "ControlServer", "ControlAPI", "ListFetch", "ServiceKit",
                // The household page of two helpers on one database (SharedWebAccountTests).
                "HouseholdPage", "Sinkhole", .product(name: "NIOPosix", package: "swift-nio"),
                .product(name: "ServiceLifecycle", package: "swift-service-lifecycle"),
            ],
            swiftSettings: swiftSettings
        ),
        .testTarget(name: "EndToEndTests", dependencies: ["DNSWire", "ControlAPI", "TestSupport", "scrolloff-dns", "scrolloff-cli"], swiftSettings: swiftSettings),
    ]
)
