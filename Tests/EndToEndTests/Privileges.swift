import Foundation
import TestSupport
import Testing

/// How the test starts `scrolloff-dns`: as people run it (SPEC §9). Every DNS transport test runs
/// in each mode, because a socket option that needs a capability only root has (SO_DEBUG, set by
/// mistake) broke DNS over TCP for everyone else while every test ran as root.
enum PrivilegeMode: String, CaseIterable, Sendable, CustomTestStringConvertible {
    /// Root with every capability, as the tests and `sudo make run` run it.
    case root
    /// An ordinary user (`make run` without sudo): uid and gid 65534, no supplementary groups.
    case ordinaryUser = "ordinary user"
    /// Root under the shipped unit's `CapabilityBoundingSet`, with nothing inheritable.
    case unitCapabilities = "unit capabilities"

    var testDescription: String { rawValue }

    static let ordinaryUID: uid_t = 65534
    static let ordinaryGID: gid_t = 65534

    /// The program to start and the arguments before the helper's own path.
    ///
    /// Run by an ordinary user (a developer's `swift test`), every mode starts the helper as that
    /// user: it has no capabilities at all, fewer than either non-root mode asks for.
    func launcher() throws -> (executable: String, prefix: [String]) {
        if geteuid() != 0 { return (Products.scrolloffDNS, []) }
        switch self {
        case .root:
            return (Products.scrolloffDNS, [])
        case .ordinaryUser:
            return ("/usr/bin/setpriv", ["--reuid=\(Self.ordinaryUID)", "--regid=\(Self.ordinaryGID)", "--clear-groups",
                                         try ReachableInstall.shared.helper])
        case .unitCapabilities:
            return ("/usr/bin/setpriv", ["--bounding-set=\(try UnitCapabilities.boundingSet())", "--inh-caps=-all",
                                         try ReachableInstall.shared.helper])
        }
    }

    /// `launch` run in this mode: the reachable copy of the helper under `setpriv`, after the
    /// launch's own wrappers (so `prlimit` limits the user's helper, not the other way round).
    func applied(to launch: HelperLaunch) throws -> HelperLaunch {
        var launch = launch
        let (executable, prefix) = try launcher()
        guard executable == "/usr/bin/setpriv", let helper = prefix.last else {
            launch.executable = executable
            return launch
        }
        launch.executable = helper
        launch.wrappers.append(.setpriv(Array(prefix.dropLast())))
        return launch
    }

    /// A folder for the helper's state and control socket that the helper's user may write.
    func privateFolder(in scratch: Scratch, name: String) throws -> String {
        let folder = "\(scratch.path)/\(name)"
        try FileManager.default.createDirectory(atPath: folder, withIntermediateDirectories: true)
        if self == .ordinaryUser, geteuid() == 0, chown(folder, Self.ordinaryUID, Self.ordinaryGID) != 0 {
            throw HarnessError("cannot chown \(folder) to \(Self.ordinaryUID): \(String(cString: strerror(errno)))")
        }
        return folder
    }
}

/// The capabilities the shipped unit keeps (`CapabilityBoundingSet=` in
/// etc/systemd/scrolloff-dns.service), as `setpriv --bounding-set` wants them: `-all,+net_bind_service,+chown`.
enum UnitCapabilities {
    static func boundingSet() throws -> String {
        let unit = try String(contentsOfFile: repositoryRoot + "/etc/systemd/scrolloff-dns.service", encoding: .utf8)
        guard let line = unit.split(separator: "\n").first(where: { $0.hasPrefix("CapabilityBoundingSet=") }) else {
            throw HarnessError("the unit has no CapabilityBoundingSet= line")
        }
        let names = line.dropFirst("CapabilityBoundingSet=".count).split(separator: " ").map {
            $0.lowercased().replacingOccurrences(of: "cap_", with: "")
        }
        return (["-all"] + names.map { "+" + $0 }).joined(separator: ",")
    }
}

/// The repository's root, found from this file.
let repositoryRoot: String = {
    var url = URL(fileURLWithPath: #filePath)
    for _ in 0..<3 { url.deleteLastPathComponent() }
    return url.path
}()

/// A copy of the helper and the curated lists in an install layout (`bin/`, `share/scrolloff/`)
/// under /tmp, which any user can reach: the build folder may sit in a home directory that an
/// ordinary user cannot enter (CI's checkout, say). Made once per test run and removed at exit.
final class ReachableInstall: Sendable {
    static let shared = ReachableInstall()
    let root = NSTemporaryDirectory() + "scrolloff-e2e-install-\(getpid())"

    private let made: Result<String, HarnessError>

    var helper: String { get throws { try made.get() } }

    private init() {
        let root = root
        made = Result {
            let manager = FileManager.default
            try? manager.removeItem(atPath: root)
            try manager.createDirectory(atPath: root + "/bin", withIntermediateDirectories: true)
            try manager.createDirectory(atPath: root + "/share/scrolloff", withIntermediateDirectories: true)
            let helper = root + "/bin/scrolloff-dns"
            // Copied by cp, not in this process: a child spawned meanwhile by another test would
            // inherit the descriptor open for writing, and exec of the copy would fail with ETXTBSY.
            let copied = try runWithStatus("/bin/cp", ["-R", Products.scrolloffDNS, helper])
            let lists = try runWithStatus("/bin/cp", ["-R", repositoryRoot + "/blocklists", root + "/share/scrolloff/blocklists"])
            guard copied.exitCode == 0, lists.exitCode == 0 else { throw HarnessError("\(copied) \(lists)") }
            for folder in [root, root + "/bin", root + "/share", root + "/share/scrolloff"] { chmod(folder, 0o755) }
            chmod(helper, 0o755)
            return helper
        }.mapError { HarnessError("cannot copy the helper to \(root): \($0)") }
        atexit { try? FileManager.default.removeItem(atPath: ReachableInstall.shared.root) }
    }
}

/// The resident memory of process `pid` in KiB: now (VmRSS) and at its peak (VmHWM), from /proc.
func residentKiB(_ pid: pid_t) -> (now: Int, peak: Int) {
    let status = (try? String(contentsOfFile: "/proc/\(pid)/status", encoding: .utf8)) ?? ""
    func field(_ name: String) -> Int {
        guard let line = status.split(separator: "\n").first(where: { $0.hasPrefix(name + ":") }) else { return -1 }
        return Int(line.split(separator: " ", omittingEmptySubsequences: true).dropFirst().first ?? "") ?? -1
    }
    return (field("VmRSS"), field("VmHWM"))
}

/// The real uid and effective capability mask of process `pid`, from /proc/PID/status.
func processIdentity(_ pid: pid_t) -> (uid: Int, effectiveCapabilities: UInt64) {
    let status = (try? String(contentsOfFile: "/proc/\(pid)/status", encoding: .utf8)) ?? ""
    func fields(_ name: String) -> [Substring] {
        status.split(separator: "\n").first { $0.hasPrefix(name + ":") }?.split(whereSeparator: { $0 == "\t" || $0 == " " }).dropFirst().map { $0 } ?? []
    }
    return (Int(fields("Uid").first ?? "") ?? -1, UInt64(fields("CapEff").first ?? "", radix: 16) ?? .max)
}

extension PrivilegeMode {
    /// Checks that the helper really runs as this mode says (when the tests run as root).
    func check(_ pid: pid_t) {
        guard geteuid() == 0 else { return }
        let identity = processIdentity(pid)
        switch self {
        case .root:
            #expect(identity.uid == 0, "\(identity)")
        case .ordinaryUser:
            #expect(identity.uid == Int(Self.ordinaryUID) && identity.effectiveCapabilities == 0, "\(identity)")
        case .unitCapabilities:
            // CAP_CHOWN is bit 0, CAP_NET_BIND_SERVICE bit 10, CAP_NET_ADMIN bit 12 (capability.h).
            #expect(identity.uid == 0 && identity.effectiveCapabilities == 1 << 0 | 1 << 10 | 1 << 12, "\(identity)")
        }
    }
}
