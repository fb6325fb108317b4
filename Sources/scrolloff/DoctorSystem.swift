import ControlAPI
import DoctorChecks
import Foundation
#if canImport(Glibc)
import Glibc
#endif

/// What `doctor` reads from this machine rather than from the helper: the resolver's files,
/// systemd-resolved's servers and the machine's own addresses. Reading only; the verdicts are
/// `DoctorVerdicts`.
enum DoctorSystem {
    /// Where systemd-resolved lists every server it uses, global and per link (systemd-resolved.service(8)).
    static let resolvedServersFile = "/run/systemd/resolve/resolv.conf"

    /// Where to look for systemd-resolved's own files and tool; each a hidden option of `doctor`
    /// so the tests can stand in for them.
    struct Sources {
        var resolvConf = "/etc/resolv.conf"
        var nsswitchConf = "/etc/nsswitch.conf"
        /// A resolv.conf-format list of resolved's servers, read instead of asking `resolvectl`.
        var resolvedConf: String?
        /// The `resolvectl` to run; nil for the system's.
        var resolvectl: String?
    }

    /// `/etc/resolv.conf` and nsswitch.conf's `hosts:` line, and systemd-resolved's servers for an
    /// ordinary name when a lookup reaches it (resolv.conf names its stub, nss-resolve asks it) or
    /// `alsoResolved` (the helper forwards to its stub).
    static func observeResolver(_ sources: Sources, alsoResolved: Bool) -> DoctorVerdicts.ResolverObservation {
        let nsswitch = try? String(contentsOfFile: sources.nsswitchConf, encoding: .utf8)
        var seen = DoctorVerdicts.ResolverObservation(
            resolvConfPath: sources.resolvConf, resolvConf: try? String(contentsOfFile: sources.resolvConf, encoding: .utf8),
            hostsLookup: nsswitch.map { ResolverSetup.hostsLookup(nsswitch: $0) } ?? .resolvConfOnly, nsswitchPath: sources.nsswitchConf)
        guard seen.asksResolved || alsoResolved else { return seen }
        let (source, routing) = resolvedServers(sources)
        seen.resolvedSource = source
        seen.resolvedServers = routing?.asked
        seen.resolvedIgnored = routing?.ignored ?? []
        seen.resolvedLinks = routing?.links ?? [:]
        return seen
    }

    /// resolved's servers for an ordinary name: from `--resolved-conf` when given; else from
    /// `resolvectl dns`, `domain` and `default-route`, which keep ports, links and routing
    /// domains; else resolved's own resolv.conf-format list (every server counts then).
    static func resolvedServers(_ sources: Sources) -> (source: String, routing: ResolvedRouting?) {
        if let explicit = sources.resolvedConf {
            let text = try? String(contentsOfFile: explicit, encoding: .utf8)
            return (explicit, text.map { ResolvedRouting(asked: ResolverSetup.nameServers(resolvConf: $0, limit: nil)) })
        }
        if let tool = sources.resolvectl ?? systemResolvectl(), let dns = run(tool, "dns") {
            let domains = run(tool, "domain")
            let scopes = ResolverSetup.resolvedScopes(dns: dns, domains: domains, defaultRoute: run(tool, "default-route"))
            return ("`resolvectl`", ResolverSetup.ordinaryNameRouting(scopes, domainsKnown: domains != nil))
        }
        let text = try? String(contentsOfFile: resolvedServersFile, encoding: .utf8)
        return (resolvedServersFile, text.map { ResolvedRouting(asked: ResolverSetup.nameServers(resolvConf: $0, limit: nil)) })
    }

    static func systemResolvectl() -> String? {
        ["/usr/bin/resolvectl", "/bin/resolvectl"].first { FileManager.default.isExecutableFile(atPath: $0) }
    }

    /// `resolvectl VERB` output, or nil when it fails or takes over 3 s (it asks resolved over
    /// D-Bus, which may not run).
    static func run(_ tool: String, _ verb: String) -> String? {
        let process = Process()
        process.executableURL = URL(fileURLWithPath: tool)
        process.arguments = [verb]
        let output = Pipe()
        process.standardOutput = output
        process.standardError = FileHandle.nullDevice
        do { try process.run() } catch { return nil }
        let deadline = ContinuousClock.now + .seconds(3)
        while process.isRunning, ContinuousClock.now < deadline { usleep(20_000) }
        if process.isRunning {
            process.terminate()
            return nil
        }
        let data = output.fileHandleForReading.readDataToEndOfFile()
        guard process.terminationStatus == 0 else { return nil }
        return String(decoding: data, as: UTF8.self)
    }

    /// Every address of this machine's interfaces, in canonical text form.
    static func localAddresses() -> Set<String> {
        var list: UnsafeMutablePointer<ifaddrs>?
        guard getifaddrs(&list) == 0, let first = list else { return [] }
        defer { freeifaddrs(list) }
        var addresses: Set<String> = []
        var cursor: UnsafeMutablePointer<ifaddrs>? = first
        while let entry = cursor {
            defer { cursor = entry.pointee.ifa_next }
            guard let address = entry.pointee.ifa_addr else { continue }
            var text = [CChar](repeating: 0, count: Int(INET6_ADDRSTRLEN))
            switch Int32(address.pointee.sa_family) {
            case AF_INET:
                var v4 = address.withMemoryRebound(to: sockaddr_in.self, capacity: 1) { $0.pointee.sin_addr }
                guard inet_ntop(AF_INET, &v4, &text, socklen_t(text.count)) != nil else { continue }
            case AF_INET6:
                var v6 = address.withMemoryRebound(to: sockaddr_in6.self, capacity: 1) { $0.pointee.sin6_addr }
                guard inet_ntop(AF_INET6, &v6, &text, socklen_t(text.count)) != nil else { continue }
            default:
                continue
            }
            addresses.insert(String(decoding: text.prefix { $0 != 0 }.map { UInt8(bitPattern: $0) }, as: UTF8.self))
        }
        return addresses
    }
}
