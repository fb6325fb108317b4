#if canImport(Glibc)
import Glibc
#endif
import DNSWire
import Foundation

/// A program that holds a port a listener wanted, as far as `/proc` shows it.
public struct PortHolder: Sendable, Equatable {
    /// The process, when this process may read its `/proc/PID/fd` (root, or the same user).
    public struct Owner: Sendable, Equatable {
        public var pid: Int32
        /// `/proc/PID/comm` (at most 15 bytes: `systemd-resolved` reads `systemd-resolve`).
        public var command: String
        /// The parent's command, to tell NetworkManager's dnsmasq from a dnsmasq service.
        public var parentCommand: String?

        public init(pid: Int32, command: String, parentCommand: String?) {
            self.pid = pid
            self.command = command
            self.parentCommand = parentCommand
        }
    }

    /// Programs that usually sit on port 53, each with its own fix.
    public enum Kind: Sendable, Equatable {
        case systemdResolved
        case dnsmasq(underNetworkManager: Bool)
        case scrolloff
        case other
    }

    public var socket: ProcNetSocket
    public var owner: Owner?
    /// The name of the socket's uid, which names the program even when its process is hidden.
    public var userName: String?

    public init(socket: ProcNetSocket, owner: Owner?, userName: String?) {
        self.socket = socket
        self.owner = owner
        self.userName = userName
    }

    public var kind: Kind {
        let command = owner?.command
        if command == "systemd-resolve" || (command == nil && userName == "systemd-resolve") { return .systemdResolved }
        // resolved's stub addresses (resolved.conf(5)); nothing else normally binds them.
        if command == nil, ["127.0.0.53", "127.0.0.54"].contains(socket.addressText) { return .systemdResolved }
        if command == "dnsmasq" || (command == nil && userName == "dnsmasq") {
            return .dnsmasq(underNetworkManager: owner?.parentCommand == "NetworkManager")
        }
        if command == "scrolloff-dns" { return .scrolloff }
        return .other
    }

    /// `dnsmasq (pid 812) on udp 127.0.0.1:53`, or with the user when the process is hidden.
    public var summary: String {
        let transport = socket.transport == .udp ? "udp" : "tcp"
        let who: String
        if let owner {
            who = "\(owner.command) (pid \(owner.pid))"
        } else if let userName {
            who = "a process of user \(userName)"
        } else {
            who = "a process of uid \(socket.uid)"
        }
        return "\(who) on \(transport) \(socket.endpointText)"
    }
}

/// Finds the holders of a port from `/proc` (proc(5)): the socket tables give the inode of every
/// bound socket, and `/proc/PID/fd/*` links read `socket:[INODE]` for the process that owns it.
public enum PortHolders {
    /// The sockets of `transport` that keep `address`:`port` from binding, with their processes.
    /// Best effort: unreadable files give fewer details, never an error, since this only explains one.
    public static func find(
        address: [UInt8], port: Int, transport: DNSTransport, procRoot: String = "/proc"
    ) -> [PortHolder] {
        let tables = transport == .udp ? ["udp", "udp6"] : ["tcp", "tcp6"]
        var sockets: [ProcNetSocket] = []
        for table in tables {
            // Read to the end with POSIX calls: procfs reports size 0 and fills the file a page at a
            // time, and a busy machine's table runs to many pages.
            guard let bytes = try? FileBytes.read(path: "\(procRoot)/net/\(table)") else { continue }
            let text = String(decoding: bytes, as: UTF8.self)
            sockets += text.split(separator: "\n").compactMap { ProcNetSocket(line: $0, transport: transport) }
                .filter { $0.blocks(address: address, port: port) }
        }
        guard !sockets.isEmpty else { return [] }
        let owners = self.owners(of: Set(sockets.map(\.inode)), procRoot: procRoot)
        var seen = Set<UInt64>()
        return sockets.compactMap { socket in
            // Every event loop of one program may hold its own SO_REUSEPORT socket: show each once.
            guard seen.insert(socket.inode).inserted else { return nil }
            return PortHolder(socket: socket, owner: owners[socket.inode], userName: userName(of: socket.uid))
        }
    }

    /// The process holding each inode, by reading every `/proc/PID/fd` this process may read.
    static func owners(of inodes: Set<UInt64>, procRoot: String) -> [UInt64: PortHolder.Owner] {
        var found: [UInt64: PortHolder.Owner] = [:]
        let processes = (try? FileManager.default.contentsOfDirectory(atPath: procRoot)) ?? []
        for entry in processes {
            guard let pid = Int32(entry) else { continue }
            let fdFolder = "\(procRoot)/\(entry)/fd"
            guard let descriptors = try? FileManager.default.contentsOfDirectory(atPath: fdFolder) else { continue }
            for descriptor in descriptors {
                guard let target = try? FileManager.default.destinationOfSymbolicLink(atPath: "\(fdFolder)/\(descriptor)"),
                      let inode = socketInode(fromLink: target), inodes.contains(inode), found[inode] == nil
                else { continue }
                found[inode] = PortHolder.Owner(
                    pid: pid, command: command(of: pid, procRoot: procRoot) ?? "pid \(pid)",
                    parentCommand: parent(of: pid, procRoot: procRoot).flatMap { command(of: $0, procRoot: procRoot) })
            }
            if found.count == inodes.count { break }
        }
        return found
    }

    /// The inode of a `/proc/PID/fd` link target `socket:[12345]`.
    public static func socketInode(fromLink target: String) -> UInt64? {
        guard target.hasPrefix("socket:["), target.hasSuffix("]") else { return nil }
        return UInt64(target.dropFirst("socket:[".count).dropLast())
    }

    static func command(of pid: Int32, procRoot: String) -> String? {
        guard let text = try? String(contentsOfFile: "\(procRoot)/\(pid)/comm", encoding: .utf8) else { return nil }
        let command = text.trimmingCharacters(in: .whitespacesAndNewlines)
        return command.isEmpty ? nil : command
    }

    /// The parent pid from `/proc/PID/stat`: the fourth field, counted after the command's closing
    /// parenthesis since the command itself may hold spaces and parentheses.
    static func parent(of pid: Int32, procRoot: String) -> Int32? {
        guard let text = try? String(contentsOfFile: "\(procRoot)/\(pid)/stat", encoding: .utf8) else { return nil }
        return parentPID(fromStat: text)
    }

    public static func parentPID(fromStat text: String) -> Int32? {
        guard let close = text.lastIndex(of: ")") else { return nil }
        let fields = text[text.index(after: close)...].split(separator: " ")
        guard fields.count >= 2 else { return nil }
        return Int32(fields[1])
    }

    static func userName(of uid: UInt32) -> String? {
        var entry = passwd()
        var result: UnsafeMutablePointer<passwd>?
        var buffer = [CChar](repeating: 0, count: 4096)
        guard getpwuid_r(uid, &entry, &buffer, buffer.count, &result) == 0, result != nil, let name = entry.pw_name else {
            return nil
        }
        return String(cString: name)
    }
}
