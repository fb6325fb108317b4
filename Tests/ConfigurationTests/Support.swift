import Config
import Foundation
import Helper
import ScrollOffCore
import ServiceKit
import Sinkhole
import Store

/// The root install's locations: the sample file documents a root install, so the tests compare
/// against the defaults a root helper starts from, whoever runs them.
let rootBase = RuntimePaths.defaults(isRoot: true, environment: [:])

/// A resolv.conf that does not exist, so `dns.upstreams = []` reads no server and results do not
/// depend on the machine running the tests.
let noResolvConf = "/nonexistent/scrolloff-tests/resolv.conf"

func parse(_ text: String, overrides: ConfigurationOverrides = ConfigurationOverrides(), resolvConf: String = noResolvConf)
    throws(ConfigurationError) -> HelperConfiguration
{
    try ConfigurationFile.parse(text: text, source: "test.toml", base: rootBase, overrides: overrides, resolvConf: resolvConf)
}

/// The problems of a file that must not parse; none when it parses (the test then fails on them).
func problems(_ text: String) -> [ConfigurationProblem] {
    do {
        _ = try parse(text)
        return []
    } catch {
        return error.problems
    }
}

/// Every setting of a configuration as text, knobs resolved against the preset: two configurations
/// with equal dictionaries behave the same, and a difference prints as the key that differs.
func effective(_ c: HelperConfiguration) -> [String: String] {
    var d: [String: String] = [
        "configFile": c.paths.configFile,
        "stateDirectory": c.paths.stateDirectory,
        "controlSocket": c.paths.controlSocket,
        "listen": c.listen.map(\.description).joined(separator: ","),
        "upstreams": c.upstreams.map(\.description).joined(separator: ","),
        "blockingMode": c.blockingMode.rawValue,
        "catalogPath": c.catalogPath ?? "nil",
        "dohEndpointsPath": c.dohEndpointsPath ?? "nil",
        "eventLoops": "\(c.eventLoops)",
        "forwarder": "\(c.forwarder.perUpstream.nanoseconds)/\(c.forwarder.overall.nanoseconds)",
        "unwantedReplyThreshold": "\(c.forwarder.unwantedReplyThreshold)",
        "cache": "\(c.cache.capacity) \(c.cache.minimumTTL) \(c.cache.maximumTTL) \(c.cache.maximumNegativeTTL) \(c.cache.maximumStaleAge)",
        "blockedTTL": "\(c.blockedTTL)",
        "rateLimit": c.rateLimit.map { "\($0.queriesPerSecond)/\($0.burst)" } ?? "off",
        "listSources": c.listSources.map { "\($0.name)=\($0.url)" }.joined(separator: ","),
        "listRefreshPeriod": "\(c.listRefreshPeriod.milliseconds)",
        "metricsListen": c.metricsListen?.description ?? "off",
        "webListen": c.webListen?.description ?? "off",
        "web": "\(c.web.requestTimeout.milliseconds)/\(c.web.signInMaximumDelay.milliseconds)",
        "digestHook": "\(c.digestHook.command) \(c.digestHook.timeout.milliseconds)",
        "logLevel": c.logLevel.rawValue,
        "profiles": c.profiles.map(\.name).joined(separator: ","),
        "tcp": "\(c.tcp.maximumConnections)/\(c.tcp.maximumConnectionsPerClient)/\(c.tcp.maximumInFlightPerConnection)/\(c.tcp.maximumInFlightPerClient)/"
            + "\(c.tcp.idleTimeout.nanoseconds)/\(c.tcp.maximumUnsentBytes)",
        "control": "\(c.control.total)/\(c.control.perUser)",
        "enforcementMode": c.enforcementMode.rawValue,
        "hostsFile": c.hostsFile,
        "firewall": "\(c.firewall.enabled)/\(c.firewall.mode.rawValue)/\(c.firewall.lanInterfaces)/\(c.firewall.extraDoHAddresses)/"
            + "\(c.firewall.resolveDoHNames)/\(c.firewall.mark)",
        "unknownDevices": c.unknownDevices,
    ]
    for p in [c.defaultProfile] + c.profiles {
        d["\(p.name).clients"] = p.clientCIDRs.joined(separator: ",")
        d["\(p.name).zone"] = p.timeZoneID
        d["\(p.name).preset"] = p.preset.rawValue
        d["\(p.name).owners"] = p.ownerUIDs.map(String.init).joined(separator: ",")
        d["\(p.name).members"] = p.memberUIDs.map(String.init).joined(separator: ",")
        d["\(p.name).knobs"] = (try? Knobs.resolve(preset: p.preset, overrides: p.overrides)).map { "\($0)" } ?? "invalid"
    }
    return d
}

/// The repository's root, found from this file.
let repositoryRoot: String = {
    var url = URL(fileURLWithPath: #filePath)
    for _ in 0..<3 { url.deleteLastPathComponent() }
    return url.path
}()

let samplePath = repositoryRoot + "/etc/scrolloff.toml"

func sampleText() throws -> String { try String(contentsOfFile: samplePath, encoding: .utf8) }

/// A scratch folder removed when the value is released.
final class Scratch {
    let path: String
    init() throws {
        path = NSTemporaryDirectory() + "scrolloff-config-\(UUID().uuidString)"
        try FileManager.default.createDirectory(atPath: path, withIntermediateDirectories: true)
        // Set, not left to the umask: StoreTests' FileModeTests set the process-wide umask to 0
        // while other suites run, and the helper refuses a folder others can write (SPEC §11).
        chmod(path, 0o755)
    }
    func file(_ name: String, _ text: String) throws -> String {
        let file = path + "/" + name
        try text.write(toFile: file, atomically: true, encoding: .utf8)
        // The mode the helper expects of its own file, set rather than left to the umask: the
        // umask is process-wide, and StoreTests' FileModeTests set it to 0 while suites run in parallel.
        chmod(file, 0o644)
        return file
    }
    deinit { try? FileManager.default.removeItem(atPath: path) }
}
