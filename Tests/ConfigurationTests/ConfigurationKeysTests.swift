@testable import Config
import Foundation
import ScrollOffCore
import Sinkhole
import Testing

/// The declarations (`ConfigurationKeys`) are the one place a key is written: the schema, the
/// reader's checks, the defaults, the reload's names and the reference all follow them.
@Suite("Configuration keys: each declared once, everything else derived")
struct ConfigurationKeysTests {
    @Test func no_key_is_declared_twice_in_one_table() {
        var seen: Set<String> = []
        for setting in ConfigurationKeys.all { #expect(seen.insert(setting.path).inserted, "\(setting.path) is declared twice") }
    }

    @Test func the_declared_defaults_read_without_a_problem() {
        #expect(throws: Never.self) { try parse(ConfigurationKeys.defaultsDocument) }
    }

    /// The value types of other modules (`TCPLimits()`, `FirewallSettings()`, …) keep their own
    /// defaults for code that builds them directly; the helper's come from the declarations. Both
    /// must say the same, or a test building a value by hand would test another helper.
    @Test func the_declared_defaults_are_the_value_types_own() {
        let listen = rootBase.listen.compactMap { try? HostPort(parsing: $0) }
        let plain = HelperConfiguration(paths: rootBase, listen: listen, upstreams: [])
        #expect(effective(ConfigurationFile.embeddedDefaults(base: rootBase)) == effective(plain))
    }

    @Test(arguments: ConfigurationKeys.all.filter { if case .value = $0.defaultValue { !$0.section.isArray } else { false } })
    func each_key_written_with_its_declared_default_changes_nothing(setting: Setting) throws {
        guard let shown = setting.defaultValue.shown else { return }
        let c = try parse("[\(setting.section.rawValue)]\n\(setting.key) = \(shown)\n")
        #expect(effective(c) == effective(try parse("")), "\(setting.path) = \(shown)")
    }

    @Test(arguments: ConfigurationKeys.all.filter { if case .integer = $0.value { true } else { false } })
    func a_whole_number_key_says_its_bounds_in_what_it_allows(setting: Setting) {
        guard case .integer(let range) = setting.value else { return }
        #expect(setting.allowed.contains(String(range.lowerBound)) && setting.allowed.contains(String(range.upperBound)),
                "\(setting.path): \(setting.allowed)")
    }

    /// A value just past the declared bound is refused, naming the key and with the declared words.
    @Test(arguments: ConfigurationKeys.all.filter { !$0.section.isArray && $0.section != .profileKnobs && $0.section != .profilesKnobs })
    func a_value_past_the_declared_range_is_refused_with_the_declared_words(setting: Setting) {
        let past: [String]
        switch setting.value {
        case .integer(let range): past = [String(range.upperBound + 1), String(range.lowerBound - 1)]
        case .duration(let range):
            past = [Self.written(range.upperBound.milliseconds, by: 1)] + (range.lowerBound.milliseconds > 0 ? [Self.written(range.lowerBound.milliseconds, by: -1)] : [])
        case .seconds(let range):
            past = [String(range.upperBound.milliseconds / 1000 + 1)] + (range.lowerBound.milliseconds > 0 ? [String(range.lowerBound.milliseconds / 1000 - 1)] : [])
        case .choice: past = ["\"nonesuch\""]
        case .bool, .text, .texts, .integers, .knob: return
        }
        for value in past {
            let found = problems("[\(setting.section.rawValue)]\n\(setting.key) = \(value)\n")
            #expect(found.contains { $0.key == setting.path && $0.allowed == setting.allowed && $0.line == 2 },
                    "\(setting.path) = \(value): \(found)")
        }
    }

    /// A length of time a millisecond past `milliseconds`, in the words `SpanWords` reads
    /// (`"30d 1ms"`: each number short enough).
    static func written(_ milliseconds: Int64, by step: Int64) -> String {
        var rest = milliseconds + step
        var parts: [String] = []
        for (unit, size) in [("d", Int64(86_400_000)), ("h", 3_600_000), ("min", 60_000), ("s", 1000), ("ms", 1)] where rest >= size {
            parts.append("\(rest / size)\(unit)")
            rest %= size
        }
        return "\"" + parts.joined(separator: " ") + "\""
    }

    @Test func an_unknown_key_is_refused_with_the_nearest_declared_one() {
        let found = problems("[dns]\nblocked_tll = 5\n")
        #expect(found.map(\.key) == ["dns.blocked_tll"])
        #expect(found.first?.problem == "is not a setting of [dns] (did you mean blocked_ttl?)")
        #expect(found.first?.allowed == ConfigurationKeys.keys(of: .dns).map(\.key).joined(separator: ", "))
    }

    /// What the reload applies while serving and what waits for a restart, as the reloader named
    /// them before the declarations: the names in its log line and report are unchanged. (A new
    /// key may add a part; none of these may go or change sides.)
    @Test func the_reload_names_its_parts_as_before() {
        let restart = Set(ConfigurationKeys.reloadParts.filter { $0.timing == .needsRestart }.map(\.name))
        let live = Set(ConfigurationKeys.reloadParts.filter { $0.timing == .appliesAtOnce }.map(\.name))
        #expect(restart.isSuperset(of: [
            "dns.listen", "helper.state_dir", "helper.control_socket", "helper.threads", "metrics.listen", "web.listen",
            "web.request_timeout", "web.sign_in_max_delay", "lists.catalog", "helper.mode", "helper.hosts_file",
            "dns.block_encrypted_dns", "dns.tcp_*", "helper.control_connections*",
        ]))
        #expect(live.isSuperset(of: [
            "profiles", "digest", "lists.source", "lists.refresh_period", "lists.member_file_folders, lists.allow_private_hosts",
            "firewall", "dns.upstreams", "dns.upstream_timeout", "dns.unwanted_reply_threshold", "dns.blocking_mode",
            "dns.blocked_ttl", "dns.cache", "dns.rate_limit", "helper.log_level",
        ]))
        // A part the reloader keeps at restart must say which field it keeps.
        #expect(ConfigurationKeys.reloadParts.allSatisfy { $0.timing == .appliesAtOnce || $0.field != nil })
    }

    @Test func a_restart_part_compares_and_keeps_its_own_field_only() throws {
        let old = try parse("")
        let next = try parse("[dns]\nlisten = [\"127.0.0.1:5399\"]\ntcp_connections = 300\ncache_size = 5\n")
        let changed = ConfigurationKeys.reloadParts.filter { $0.changed(old, next) }.map(\.name)
        #expect(Set(changed) == ["dns.listen", "dns.tcp_*", "dns.cache"])
        var kept = next
        DNSKeys.listen.reload.field?.keep(&kept, from: old)
        #expect(kept.listen == old.listen)
        #expect(kept.tcp == next.tcp && kept.cache == next.cache)
    }
}

extension Setting: CustomTestStringConvertible {
    public var testDescription: String { path }
}

/// No key is written twice in the sources: outside its declaration, code names a key through it
/// (`DNSKeys.blockedTTL`), so renaming or removing a key cannot leave a stale copy behind.
@Suite("Configuration keys: no copy outside the declarations")
struct KeyLiteralGuardTests {
    /// Log metadata keys named after a setting, in modules the configuration depends on (so they
    /// cannot name the declaration), and the helper's descriptor report: labels, not reads.
    static let allowed: Set<String> = [
        "Sources/Firewall/FirewallController.swift firewall.doh_addresses",
        "Sources/Firewall/FirewallController.swift firewall.mode",
        "Sources/HouseholdPage/HouseholdWebService.swift web.listen",
        "Sources/Engine/Insights/DigestHook.swift digest.command",
        "Sources/Helper/DescriptorBudget.swift dns.tcp_connections",
        "Sources/Helper/DescriptorBudget.swift helper.control_connections",
        "Sources/Helper/DescriptorBudget.swift helper.control_connections_per_user",
        // The plural in "2 upstreams: …", not a read of the key.
        "Sources/Config/ConfigurationSummary.swift upstreams",
        // The singular in "1 profile: …", not a read of `allowances.profile`.
        "Sources/Config/ConfigurationSummary.swift profile",
    ]

    static func swiftFiles(under folder: String) -> [String] {
        let root = repositoryRoot + "/" + folder
        let files = FileManager.default.enumerator(atPath: root)?.compactMap { $0 as? String } ?? []
        return files.filter { $0.hasSuffix(".swift") }.map { folder + "/" + $0 }.sorted()
    }

    /// The string literals of Swift source: escapes, raw (`#"…"#`) and multi-line strings handled,
    /// comments skipped. Interpolations are read as part of their string, which is enough for a key.
    static func literals(_ text: String) -> [String] {
        let c = Array(text)
        var out: [String] = []
        var i = 0
        func at(_ j: Int) -> Character? { j < c.count ? c[j] : nil }
        while i < c.count {
            if c[i] == "/", at(i + 1) == "/" {
                while i < c.count, c[i] != "\n" { i += 1 }
                continue
            }
            if c[i] == "/", at(i + 1) == "*" {
                i += 2
                while i < c.count, !(c[i] == "*" && at(i + 1) == "/") { i += 1 }
                i += 2
                continue
            }
            var hashes = 0
            while at(i + hashes) == "#" { hashes += 1 }
            guard at(i + hashes) == "\"" else { i += max(hashes, 1); continue }
            i += hashes
            let multiline = at(i + 1) == "\"" && at(i + 2) == "\""
            let quote = multiline ? 3 : 1
            i += quote
            var body = ""
            while i < c.count {
                if hashes == 0, c[i] == "\\" { body.append(c[i]); if let n = at(i + 1) { body.append(n) }; i += 2; continue }
                if c[i] == "\"", (0..<quote).allSatisfy({ at(i + $0) == "\"" }), (0..<hashes).allSatisfy({ at(i + quote + $0) == "#" }) {
                    i += quote + hashes
                    break
                }
                if !multiline, c[i] == "\n" { break }
                body.append(c[i])
                i += 1
            }
            out.append(body)
        }
        return out
    }

    @Test func no_declared_key_is_a_string_literal_outside_the_declarations() throws {
        let declarations = "Sources/Config/Settings/"
        let paths = Set(ConfigurationKeys.all.map(\.path))
        let keys = Set(ConfigurationKeys.all.map(\.key)).subtracting(Knob.allCases.map(\.rawValue))
        var found: [String] = []
        for file in Self.swiftFiles(under: "Sources") where !file.hasPrefix(declarations) {
            let text = try String(contentsOfFile: repositoryRoot + "/" + file, encoding: .utf8)
            // A bare key (`"listen"`) is a read only where the file is read and reloaded; elsewhere
            // the same words are JSON fields and form names.
            let readsTheFile = file.hasPrefix("Sources/Config/") || file.hasPrefix("Sources/Helper/ConfigurationReloader")
            for literal in Self.literals(text) {
                let isKey = paths.contains(literal) || (readsTheFile && keys.contains(literal))
                if isKey, !Self.allowed.contains("\(file) \(literal)") { found.append("\(file): \"\(literal)\"") }
            }
        }
        #expect(found.isEmpty, "declared keys written again; name them through their declaration (ConfigurationKeys): \(found)")
    }

    @Test func the_guard_reads_literals_as_swift_writes_them() {
        #expect(Self.literals(#"let key = "dns.blocked_ttl" // "x""#) == ["dns.blocked_ttl"])
        #expect(Self.literals(#"// "dns.blocked_ttl""#).isEmpty)
        #expect(Self.literals(#"f("is \"\(x)\"", "dns.listen")"#) == [#"is \"\(x)\""#, "dns.listen"])
        #expect(Self.literals("a = ##\"say \"x\"\"## + \"dns.listen\"") == [#"say "x""#, "dns.listen"])
    }
}

/// docs/configuration.md's reference is written from the declarations; the sample is hand-written
/// and checked against them.
@Suite("Configuration keys: the reference and the sample follow the declarations")
struct ConfigurationDocumentTests {
    static let documentPath = repositoryRoot + "/docs/configuration.md"

    @Test func docs_configuration_md_holds_the_generated_reference() throws {
        let document = try String(contentsOfFile: Self.documentPath, encoding: .utf8)
        let committed = ConfigurationReference.committedSection(in: document)
        #expect(committed != nil, "docs/configuration.md has no reference markers")
        #expect(committed == ConfigurationReference.markdown(),
                "docs/configuration.md's reference differs from the declarations in Sources/Config/Settings; regenerate it: \(ConfigurationReference.regenerate)")
    }

    @Test func the_reference_names_every_declared_key_with_its_default() {
        let text = ConfigurationReference.markdown()
        for setting in ConfigurationKeys.all {
            #expect(text.contains("| `\(setting.key)` | \(setting.value.described) | \(ConfigurationReference.escaped(ConfigurationReference.defaultCell(setting.defaultValue))) |"),
                    "\(setting.path)")
        }
    }

    @Test func config_reference_write_puts_the_reference_between_the_markers() throws {
        let scratch = try Scratch()
        let stale = "# Doc\n\nBefore.\n\n\(ConfigurationReference.begin)\nold text\n\(ConfigurationReference.end)\n\nAfter.\n"
        let file = try scratch.file("configuration.md", stale)
        let run = try runBinary(["config", "reference", "--write", file])
        #expect(run.status == 0, "\(run.stderr)")
        let written = try String(contentsOfFile: file, encoding: .utf8)
        #expect(written == "# Doc\n\nBefore.\n\n\(ConfigurationReference.markdown())\n\nAfter.\n")
        let printed = try runBinary(["config", "reference"])
        #expect(printed.stdout == ConfigurationReference.markdown() + "\n")
    }

    @Test func config_reference_write_refuses_a_document_without_markers() throws {
        let scratch = try Scratch()
        let file = try scratch.file("plain.md", "# Nothing to replace\n")
        let run = try runBinary(["config", "reference", "--write", file])
        #expect(run.status != 0)
        #expect(run.stderr.contains("no reference markers"), "\(run.stderr)")
        #expect(try String(contentsOfFile: file, encoding: .utf8) == "# Nothing to replace\n")
    }

    /// Every `key = value` of the sample (uncommented) is a declared key of its table and shows the
    /// declared default; every declared key of a plain table is in the sample.
    @Test func every_key_of_the_sample_is_declared_and_shows_its_declared_default() throws {
        let lines = SampleFileTests.uncommented(try sampleText()).split(separator: "\n").map(String.init)
        var section = "", seen: Set<String> = []
        for line in lines where !line.hasPrefix("#") {
            if line.hasPrefix("[") {
                section = line.trimmingCharacters(in: CharacterSet(charactersIn: "[]"))
                continue
            }
            guard let equals = line.range(of: " = ") else { continue }
            let key = String(line[..<equals.lowerBound]), value = String(line[equals.upperBound...])
            let declared = ConfigurationKeys.all.first { $0.section.rawValue == section && $0.key == key }
            #expect(declared != nil, "etc/scrolloff.toml: \(section).\(key) is not declared")
            guard let declared else { continue }
            seen.insert(declared.path)
            if let shown = declared.defaultValue.shown {
                #expect(value == shown, "etc/scrolloff.toml shows \(declared.path) = \(value); its declaration says \(shown)")
            }
        }
        for setting in ConfigurationKeys.all where !setting.section.isArray && setting.section != .profilesKnobs {
            #expect(seen.contains(setting.path), "\(setting.path) is declared but not in etc/scrolloff.toml")
        }
    }
}

/// Runs the built `scrolloff-dns` with `arguments`.
func runBinary(_ arguments: [String]) throws -> CheckConfigTests.Run {
    let process = Process()
    process.executableURL = URL(fileURLWithPath: CheckConfigTests.binary)
    process.arguments = arguments
    let out = Pipe(), err = Pipe()
    process.standardOutput = out
    process.standardError = err
    try process.run()
    let stdout = out.fileHandleForReading.readDataToEndOfFile()
    let stderr = err.fileHandleForReading.readDataToEndOfFile()
    process.waitUntilExit()
    return CheckConfigTests.Run(status: process.terminationStatus, stdout: String(decoding: stdout, as: UTF8.self),
                                stderr: String(decoding: stderr, as: UTF8.self))
}
