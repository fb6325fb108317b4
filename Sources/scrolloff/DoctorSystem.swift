import ControlAPI
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

    /// `/etc/resolv.conf` (or `--resolv-conf`), and resolved's servers when it names the stub.
    static func observeResolver(resolvConf path: String, resolvedConf: String?) -> DoctorVerdicts.ResolverObservation {
        var seen = DoctorVerdicts.ResolverObservation(resolvConfPath: path, resolvConf: try? String(contentsOfFile: path, encoding: .utf8))
        guard seen.namesResolvedStub else { return seen }
        let (source, servers) = resolvedServers(explicit: resolvedConf)
        seen.resolvedSource = source
        seen.resolvedServers = servers
        return seen
    }

    /// resolved's servers: from `--resolved-conf` when given; else `resolvectl dns`, which keeps
    /// ports and per-link servers; else resolved's own resolv.conf-format list.
    static func resolvedServers(explicit: String?) -> (source: String, servers: [NameServer]?) {
        if let explicit {
            return (explicit, (try? String(contentsOfFile: explicit, encoding: .utf8)).map { ResolverSetup.nameServers(resolvConf: $0, limit: nil) })
        }
        if let output = resolvectlDNS() {
            return ("`resolvectl dns`", ResolverSetup.nameServers(resolvectlOutput: output))
        }
        let text = try? String(contentsOfFile: resolvedServersFile, encoding: .utf8)
        return (resolvedServersFile, text.map { ResolverSetup.nameServers(resolvConf: $0, limit: nil) })
    }

    /// `resolvectl dns` output, or nil when resolvectl is missing, fails, or takes over 3 s (it
    /// asks resolved over D-Bus, which may not run).
    static func resolvectlDNS() -> String? {
        guard let tool = ["/usr/bin/resolvectl", "/bin/resolvectl"].first(where: { FileManager.default.isExecutableFile(atPath: $0) }) else {
            return nil
        }
        let process = Process()
        process.executableURL = URL(fileURLWithPath: tool)
        process.arguments = ["dns"]
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
