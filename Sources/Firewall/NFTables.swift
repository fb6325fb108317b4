import Foundation

/// Runs the `nft` tool (Debian `nftables`). The ruleset goes in as a file, which `nft -f` applies as
/// one transaction: all of it or, on any error, none of it.
struct NFTables: Sendable {
    /// Where `nft` is looked for, in order (Debian puts it in /usr/sbin).
    static let candidates = ["/usr/sbin/nft", "/sbin/nft", "/usr/bin/nft"]

    let executable: String
    /// The folder the ruleset file is written to (the state folder: writable under the unit).
    let folder: String

    /// nil when nftables is not installed.
    init?(folder: String) {
        guard let found = Self.candidates.first(where: { FileManager.default.isExecutableFile(atPath: $0) }) else { return nil }
        self.init(executable: found, folder: folder)
    }

    init(executable: String, folder: String) {
        self.executable = executable
        self.folder = folder
    }

    /// Applies `ruleset` atomically. The file stays in the state folder (`firewall.nft` for a
    /// whole table, `firewall-sets.nft` for a DoH set update), so an administrator can read what
    /// was applied last.
    func apply(_ ruleset: String, file: String = "firewall.nft") throws(FirewallError) {
        let path = folder + "/" + file
        do {
            try Data(ruleset.utf8).write(to: URL(fileURLWithPath: path), options: .atomic)
        } catch {
            throw .cannotApply("cannot write \(path): \(error.localizedDescription)")
        }
        let (status, output) = run(["-f", path])
        guard status == 0 else {
            throw .cannotApply(output.trimmingCharacters(in: .whitespacesAndNewlines).isEmpty
                ? "nft exited with status \(status)" : output.trimmingCharacters(in: .whitespacesAndNewlines))
        }
    }

    /// `nft -j list counters table inet scrolloff`: each named counter's packets; nil when the
    /// table is not there.
    func counters() -> [String: UInt64]? {
        let (status, output) = run(["-j", "list", "counters", "table", FirewallRuleset.family, FirewallRuleset.table])
        guard status == 0, let data = output.data(using: .utf8),
              let object = try? JSONSerialization.jsonObject(with: data) as? [String: Any],
              let items = object["nftables"] as? [[String: Any]] else { return nil }
        var counts: [String: UInt64] = [:]
        for item in items {
            guard let counter = item["counter"] as? [String: Any], let name = counter["name"] as? String else { continue }
            counts[name] = (counter["packets"] as? NSNumber)?.uint64Value ?? 0
        }
        return counts
    }

    /// Reads the attempt sets (`attempts_ipv4`, `attempts_ipv6`) and returns what each element
    /// counted since the last read, given what the last read saw (`previous`), with what this
    /// read saw for the next call.
    ///
    /// Elements are not deleted as they are read: a packet counted into an element between the
    /// read and a delete was lost (a device's DoH attempt over TCP and then UDP to one address is
    /// one element, and a full test run read it as 1). Only elements that counted nothing since the
    /// last read are deleted, so the sets stay as small as the attempts of the last few seconds;
    /// a packet lost now must hit an element idle for a whole interval in the moment between its
    /// read and its delete.
    func takeAttempts(previous: [BypassAttempt: UInt64]) -> (caught: [CaughtAttempt], seen: [BypassAttempt: UInt64]) {
        var found: [CaughtAttempt] = []
        var seen: [BypassAttempt: UInt64] = [:]
        for set in ["attempts_ipv4", "attempts_ipv6"] {
            let (status, output) = run(["-j", "list", "set", FirewallRuleset.family, FirewallRuleset.table, set])
            guard status == 0, let data = output.data(using: .utf8),
                  let object = try? JSONSerialization.jsonObject(with: data) as? [String: Any],
                  let items = object["nftables"] as? [[String: Any]] else { continue }
            var taken: [CaughtAttempt] = []
            for item in items {
                guard let description = item["set"] as? [String: Any], let elements = description["elem"] as? [Any] else { continue }
                for element in elements {
                    // A plain element is {"concat": [...]}; one with a timeout wraps it in {"elem": {"val": ...}}.
                    var value = element as? [String: Any]
                    var packets: UInt64 = 1
                    if let wrapped = value?["elem"] as? [String: Any] {
                        value = wrapped["val"] as? [String: Any]
                        if let counter = wrapped["counter"] as? [String: Any], let counted = counter["packets"] as? NSNumber {
                            packets = counted.uint64Value
                        }
                    }
                    guard let parts = value?["concat"] as? [Any], parts.count == 3,
                          let client = parts[0] as? String, let server = parts[1] as? String,
                          let port = Self.port(parts[2]) else { continue }
                    taken.append(CaughtAttempt(attempt: BypassAttempt(client: client, server: server, port: port), packets: packets))
                }
            }
            var idle: [BypassAttempt] = []
            for element in taken {
                let before = previous[element.attempt] ?? 0
                // Fewer than before: the element went (its timeout) and came back, counting anew.
                let counted = element.packets >= before ? element.packets - before : element.packets
                if counted > 0 {
                    found.append(CaughtAttempt(attempt: element.attempt, packets: counted))
                    seen[element.attempt] = element.packets
                } else {
                    idle.append(element.attempt)
                }
            }
            guard !idle.isEmpty else { continue }
            let elements = idle.map { "\($0.client) . \($0.server) . \($0.port)" }.joined(separator: ", ")
            if run(["delete", "element", FirewallRuleset.family, FirewallRuleset.table, set, "{ \(elements) }"]).status != 0 {
                // Still there: remembered with their counts, so they are not counted twice.
                for attempt in idle { seen[attempt] = previous[attempt] }
            }
        }
        return (found, seen)
    }

    /// A port as nft's JSON gives it: a number, or a service name without `-S`… in some versions.
    private static func port(_ value: Any) -> Int? {
        if let number = value as? NSNumber { return number.intValue }
        switch value as? String {
        case "domain": return 53
        case "https": return 443
        case "domain-s": return 853
        case let text?:
            if let number = Int(text) { return number }
            // Any port of a listed resolver is recorded now, and nft may name it from
            // /etc/services (5353 "mdns"): the same file read back.
            guard let entry = getservbyname(text, nil) else { return nil }
            return Int(UInt16(bigEndian: UInt16(truncatingIfNeeded: entry.pointee.s_port)))
        default: return nil
        }
    }

    /// Whether our table is in the ruleset now.
    func tableExists() -> Bool {
        run(["list", "table", FirewallRuleset.family, FirewallRuleset.table]).status == 0
    }

    /// Runs nft with stdin from /dev/null and stdout and stderr read together through a pipe.
    private func run(_ arguments: [String]) -> (status: Int32, output: String) {
        var fds: [Int32] = [0, 0]
        guard pipe(&fds) == 0 else { return (-1, "cannot make a pipe: \(String(cString: strerror(errno)))") }
        var actions = posix_spawn_file_actions_t()
        posix_spawn_file_actions_init(&actions)
        defer { posix_spawn_file_actions_destroy(&actions) }
        posix_spawn_file_actions_addopen(&actions, 0, "/dev/null", O_RDONLY, 0)
        posix_spawn_file_actions_adddup2(&actions, fds[1], 1)
        posix_spawn_file_actions_adddup2(&actions, fds[1], 2)
        posix_spawn_file_actions_addclose(&actions, fds[0])
        let argv = ([executable] + arguments).map { strdup($0) } + [nil]
        defer { for pointer in argv { free(pointer) } }
        var pid: pid_t = 0
        let spawned = posix_spawn(&pid, executable, &actions, nil, argv, environ)
        close(fds[1])
        defer { close(fds[0]) }
        guard spawned == 0 else { return (-1, "cannot run \(executable): \(String(cString: strerror(spawned)))") }
        var output = [UInt8]()
        var buffer = [UInt8](repeating: 0, count: 65536)
        while true {
            let count = read(fds[0], &buffer, buffer.count)
            if count > 0 { output += buffer[0..<count]; continue }
            if count < 0, errno == EINTR { continue }
            break
        }
        var status: Int32 = 0
        while waitpid(pid, &status, 0) < 0, errno == EINTR {}
        // WIFEXITED/WEXITSTATUS are macros Swift does not import.
        let exited = status & 0x7F == 0
        return (exited ? (status >> 8) & 0xFF : -1, String(decoding: output, as: UTF8.self))
    }
}

/// The firewall could not be put in place or taken away; the message says what to do.
public enum FirewallError: Error, Sendable, CustomStringConvertible, Equatable {
    case notInstalled
    case cannotApply(String)

    public var description: String {
        switch self {
        case .notInstalled:
            "firewall.enabled is true but nftables is not installed (no nft in /usr/sbin, /sbin or /usr/bin); "
                + "install it (apt-get install nftables) or set [firewall] enabled = false"
        case .cannotApply(let reason):
            "nft refused the scrolloff table: \(reason). The helper needs CAP_NET_ADMIN (root, and the unit's "
                + "CapabilityBoundingSet) and a kernel with nf_tables; or set [firewall] enabled = false"
        }
    }
}
