import Foundation
import PostgresNIO
import ScrollOffCore
import Store

/// Which helper process holds a node name, so two machines left with one name (two Raspberry Pis
/// both `raspberrypi`, `[store] node` defaulting to the host name) are noticed instead of silently
/// sharing one clock anchor, one `nodes` row and the lists added through "this node".
///
/// Each helper process has an instance id (random, made at its start). The `nodes` row names the
/// instance that heartbeats it; a helper takes the row only when it is free, its own, its
/// previous process's (the id kept in the state folder, so a quick restart is not refused), or
/// stale (no heartbeat for `nodeStaleAfter`, so a helper whose state folder was lost waits that
/// long at most). Taking it is one `INSERT … ON CONFLICT … WHERE`, so of two helpers starting at
/// once exactly one gets it and the other is refused.
extension PostgresStateStore {
    /// Three heartbeats (every 5 s) missed: the holder is gone (or cut off from the database that long).
    public static let nodeStaleAfter = Span.seconds(15)
    /// The file in the state folder that keeps the instance id of this machine's last helper.
    public static let instanceFileName = "store-instance"

    static func makeInstance() -> String {
        String(UInt64.random(in: 1...UInt64.max), radix: 16).leftPadded(to: 16)
    }

    static let hostName = ProcessInfo.processInfo.hostName

    /// Takes the node row for `instance` if it is free, this instance's, `$5`'s (the previous
    /// process's) or stale; returns no row when another instance holds it.
    static let claimSQL = """
        INSERT INTO nodes (node, seen_at, clock_offset_ms, instance, host, address)
        VALUES ($1, clock_timestamp(), $2, $3, $4, COALESCE(host(inet_client_addr()), ''))
        ON CONFLICT (node) DO UPDATE SET seen_at = excluded.seen_at, clock_offset_ms = excluded.clock_offset_ms,
            instance = excluded.instance, host = excluded.host, address = excluded.address,
            contested_by = CASE WHEN nodes.instance = excluded.instance THEN nodes.contested_by ELSE '' END
        WHERE nodes.instance = $3 OR nodes.instance = '' OR ($5 <> '' AND nodes.instance = $5)
            OR nodes.seen_at < clock_timestamp() - $6::bigint * interval '1 millisecond'
        RETURNING contested_by, COALESCE((extract(epoch from clock_timestamp() - contested_at) * 1000)::bigint, -1) AS contested_ago_ms
        """

    /// Claims this node's name for this process at the helper's start, or refuses with who holds it.
    /// - Parameter stateDirectory: where the previous process's instance id is kept (read, then
    ///   replaced by this one's once the name is claimed).
    public func claimNode(stateDirectory: String) throws(NodeClaimError) {
        let file = (stateDirectory as NSString).appendingPathComponent(Self.instanceFileName)
        let previous = (try? String(contentsOfFile: file, encoding: .utf8))?.trimmingCharacters(in: .whitespacesAndNewlines) ?? ""
        try claimNode(previousInstance: previous)
        do {
            try Data((instance + "\n").utf8).write(to: URL(fileURLWithPath: file), options: .atomic)
        } catch {
            throw .store(.invalidChange("cannot write \(file): \(error.localizedDescription); check that the state folder is writable"))
        }
    }

    /// As `claimNode(stateDirectory:)`, with the previous process's instance id given ("" for none).
    public func claimNode(previousInstance: String) throws(NodeClaimError) {
        let taken: NodeHolder?
        let ownAddress: String
        do {
            (taken, ownAddress) = try session.run { s in
                let claimed = try s.rows(Self.claimSQL, [.text(node), .int(clockOffsetMilliseconds), .text(instance), .text(Self.hostName),
                                                         .text(previousInstance), .int(Self.nodeStaleAfter.milliseconds)])
                return (claimed.isEmpty ? try Self.holder(of: node, s: s) : nil, try Self.ownAddress(s))
            }
        } catch {
            throw .store(error)
        }
        if let taken {
            throw .taken(node: node, holder: taken,
                         this: NodeHolder(instance: instance, host: Self.hostName, address: ownAddress, millisecondsAgo: 0))
        }
    }

    static func holder(of node: String, s: Statements) throws -> NodeHolder? {
        try s.rows("""
            SELECT instance, host, address, (extract(epoch from clock_timestamp() - seen_at) * 1000)::bigint AS ago FROM nodes WHERE node = $1
            """, [.text(node)]).first.map {
            NodeHolder(instance: try $0.text("instance"), host: try $0.text("host"), address: try $0.text("address"),
                       millisecondsAgo: try $0.int("ago"))
        }
    }

    /// The address the server sees this connection come from ("" on a Unix socket).
    static func ownAddress(_ s: Statements) throws -> String {
        try s.rows("SELECT COALESCE(host(inet_client_addr()), '') AS a").first?.text("a") ?? ""
    }

    /// Records what the last heartbeat found, saying it in the log when it starts, ends, and
    /// once a minute while it lasts (DNS goes on answering from this helper's snapshot).
    func noteClash(_ clash: NodeNameClash?) {
        enum Say { case nothing, clash, over }
        let say: Say = nameClash.withLockedValue { current in
            let lastLogged = current?.logged
            var next = clash
            var say = Say.nothing
            if next != nil {
                if lastLogged.map({ ContinuousClock.now - $0 > .seconds(60) }) ?? true {
                    next?.logged = .now
                    say = .clash
                } else {
                    next?.logged = lastLogged
                }
            } else if current != nil {
                say = .over
            }
            current = next
            return say
        }
        switch say {
        case .clash:
            if let clash {
                session.logger.error("\(clash.problem(node: node, instance: instance))", metadata: ["household.node": "\(node)", "store.instance": "\(instance)"])
            }
        case .over:
            session.logger.notice("node name \(node) is this helper's alone again", metadata: ["store.instance": "\(instance)"])
        case .nothing:
            break
        }
    }
}

/// A helper process seen holding (or contesting) a node name.
public struct NodeHolder: Hashable, Sendable {
    public var instance: String
    public var host: String
    /// The address the database server sees it at; "" on a Unix socket.
    public var address: String
    /// How long ago, by the server's clock, it was last seen.
    public var millisecondsAgo: Int64

    init(instance: String, host: String, address: String, millisecondsAgo: Int64) {
        self.instance = instance
        self.host = host
        self.address = address
        self.millisecondsAgo = millisecondsAgo
    }

    /// From `nodes.contested_by`, as `contestedText` wrote it.
    init(contested: String, millisecondsAgo: Int64) {
        let parts = contested.split(separator: "|", maxSplits: 2, omittingEmptySubsequences: false).map(String.init)
        self.init(instance: parts.first ?? "", host: parts.count > 1 ? parts[1] : "", address: parts.count > 2 ? parts[2] : "",
                  millisecondsAgo: millisecondsAgo)
    }

    static func contestedText(instance: String, host: String, address: String) -> String { "\(instance)|\(host)|\(address)" }

    /// "192.168.1.3 (host raspberrypi, instance 3f2a…)".
    public var description: String {
        "\(address.isEmpty ? "a local socket" : address) (host \(host.isEmpty ? "unknown" : host), instance \(instance.isEmpty ? "unknown" : instance))"
    }
}

/// Two helper processes found with one node name.
public struct NodeNameClash: Hashable, Sendable {
    /// Whether this helper holds the name (the other contests it) or yields it to the other.
    public var holds: Bool
    public var other: NodeHolder
    var logged: ContinuousClock.Instant?

    init(holds: Bool, other: NodeHolder) {
        self.holds = holds
        self.other = other
    }

    public static func == (a: Self, b: Self) -> Bool { a.holds == b.holds && a.other == b.other }
    public func hash(into h: inout Hasher) { h.combine(holds); h.combine(other) }

    func problem(node: String, instance: String) -> String {
        "\(other.millisecondsAgo / 1000) s ago another helper used node name \"\(node)\" too: \(other.description), while this one is instance "
            + "\(instance)\(holds ? "" : ", which yields the name to it") (DNS still answers from this helper's rules); "
            + NodeClaimError.consequence + "; " + NodeClaimError.fix(node: node)
    }
}

/// Why a helper's start was refused its node name.
public enum NodeClaimError: Error, CustomStringConvertible {
    /// Another instance heartbeated the name less than `nodeStaleAfter` ago.
    case taken(node: String, holder: NodeHolder, this: NodeHolder)
    case store(StoreError)

    static let consequence = "two helpers with one name overwrite each other's clock anchor and node row, "
        + "and a list root added through one is read as root's on the other"

    static func fix(node: String) -> String {
        "set `[store] node = \"...\"` to a distinct name on each machine (for example \"\(node)-kitchen\" and \"\(node)-hall\") and restart them"
    }

    public var description: String {
        switch self {
        case .taken(let node, let holder, let this):
            return "node name \"\(node)\" was heartbeated \(holder.millisecondsAgo / 1000) s ago by another helper, \(holder.description); "
                + "this one is \(this.description). Refused: \(Self.consequence). To fix it, \(Self.fix(node: node)). If the other is this "
                + "machine's previous helper and its state folder was replaced, start again in \(PostgresStateStore.nodeStaleAfter.milliseconds / 1000) s"
        case .store(let error):
            return "\(error)"
        }
    }
}

/// The listener's `LISTEN` connection, as it last found it (`PostgresListener`).
public struct ListenerHealth: Hashable, Sendable {
    /// A listener has run on this store (nothing is reported for a store nobody listens on).
    public var running = false
    /// Since when notifications do not arrive (the connection lost, or its probe not back); nil while they do.
    public var downSince: Date?
    /// The last loss, and how long it lasted once over.
    public var lastLoss: Date?
    public var lastDownMilliseconds: Int64?
    public var losses: Int64 = 0
    /// Why it was last lost.
    public var lastReason = ""
    /// The server process of its connection (`pg_backend_pid()`), the last one opened.
    public var backendPID: Int64?

    /// A loss this recent is still reported by `doctor` after the listener is back.
    public static let reportedFor: TimeInterval = 300

    func problems(now: Date = Date()) -> [String] {
        guard running else { return [] }
        let polling = "changes from the other helpers arrive only by the once-a-second version check meanwhile, up to a second late"
        if let since = downSince {
            let seconds = Int64(now.timeIntervalSince(since))
            return ["notifications from the household database have not arrived for \(seconds) s (its LISTEN connection: \(lastReason)); "
                    + "\(polling); the listener reconnects by itself; if this lasts, check the network to the database and the server's log"]
        }
        if let loss = lastLoss, now.timeIntervalSince(loss) < Self.reportedFor {
            let down = lastDownMilliseconds.map { "; back after \($0) ms" } ?? ""
            return ["the household database's LISTEN connection was lost \(losses) \(losses == 1 ? "time" : "times"), the last "
                    + "\(Int64(now.timeIntervalSince(loss))) s ago (\(lastReason))\(down); \(polling) while it was down; if this repeats, "
                    + "check the network to the database and the server's log (idle timeouts, a pooler that drops LISTEN)"]
        }
        return []
    }
}

private extension String {
    func leftPadded(to width: Int) -> String { count >= width ? self : String(repeating: "0", count: width - count) + self }
}
