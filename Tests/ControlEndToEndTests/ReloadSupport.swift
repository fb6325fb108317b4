#if canImport(Glibc)
import Config
import Glibc
#endif
import Foundation
import Helper
import ScrollOffCore
import ServiceKit
import Sinkhole
import Store
import Synchronization
import TestSupport

/// A free port on 127.0.0.1 for both UDP and TCP, found by binding port 0 (then released).
func freeLoopbackPort() throws -> Int {
    for _ in 0..<20 {
        let udp = socket(AF_INET, Int32(SOCK_DGRAM.rawValue), 0)
        defer { close(udp) }
        var address = sockaddr_in()
        address.sin_family = sa_family_t(AF_INET)
        address.sin_addr.s_addr = inet_addr("127.0.0.1")
        let bound = withUnsafePointer(to: &address) {
            $0.withMemoryRebound(to: sockaddr.self, capacity: 1) { bind(udp, $0, socklen_t(MemoryLayout<sockaddr_in>.size)) }
        }
        guard bound == 0 else { continue }
        var length = socklen_t(MemoryLayout<sockaddr_in>.size)
        _ = withUnsafeMutablePointer(to: &address) {
            $0.withMemoryRebound(to: sockaddr.self, capacity: 1) { getsockname(udp, $0, &length) }
        }
        let port = Int(UInt16(bigEndian: address.sin_port))
        // The TCP listener takes the same number: check it is free too.
        let tcp = socket(AF_INET, Int32(SOCK_STREAM.rawValue), 0)
        defer { close(tcp) }
        let tcpBound = withUnsafePointer(to: &address) {
            $0.withMemoryRebound(to: sockaddr.self, capacity: 1) { bind(tcp, $0, socklen_t(MemoryLayout<sockaddr_in>.size)) }
        }
        if tcpBound == 0 { return port }
    }
    throw POSIXFailure(operation: "find a free port", code: errno)
}

/// dnsmasq as a real upstream: every name under `.test` and `www.instagram.com` answer `address`.
final class UpstreamResolver: Sendable {
    let port: Int
    let address: String
    let pid: pid_t

    init(answering address: String) async throws {
        port = try freeLoopbackPort()
        self.address = address
        pid = try Self.spawn("/usr/sbin/dnsmasq", [
            "--no-daemon", "--conf-file=/dev/null", "--port=\(port)", "--listen-address=127.0.0.1", "--bind-interfaces",
            "--no-resolv", "--no-hosts", "--pid-file=", "--address=/test/\(address)",
            "--host-record=www.instagram.com,\(address)", "--host-record=ready.probe,\(address)",
        ])
        let port = self.port
        guard await eventually({ (try? await dig(port: port, "ready.probe"))?.contains(address) == true }) else {
            stop()
            throw POSIXFailure(operation: "start dnsmasq on \(port)", code: 0)
        }
    }

    /// posix_spawn rather than Foundation's Process: a test thread blocks most signals and a child
    /// inherits the mask, so the mask is reset here or SIGTERM would never reach dnsmasq.
    private static func spawn(_ executable: String, _ arguments: [String]) throws -> pid_t {
        var actions = posix_spawn_file_actions_t()
        posix_spawn_file_actions_init(&actions)
        defer { posix_spawn_file_actions_destroy(&actions) }
        for fd: Int32 in [0, 1, 2] { posix_spawn_file_actions_addopen(&actions, fd, "/dev/null", fd == 0 ? O_RDONLY : O_WRONLY, 0) }
        var attributes = posix_spawnattr_t()
        posix_spawnattr_init(&attributes)
        defer { posix_spawnattr_destroy(&attributes) }
        var empty = sigset_t()
        sigemptyset(&empty)
        var all = sigset_t()
        sigfillset(&all)
        posix_spawnattr_setsigmask(&attributes, &empty)
        posix_spawnattr_setsigdefault(&attributes, &all)
        posix_spawnattr_setflags(&attributes, Int16(POSIX_SPAWN_SETSIGMASK | POSIX_SPAWN_SETSIGDEF))
        let argv = ([executable] + arguments).map { strdup($0) } + [nil]
        defer { for pointer in argv { free(pointer) } }
        var pid: pid_t = 0
        let result = posix_spawn(&pid, executable, &actions, &attributes, argv, environ)
        guard result == 0 else { throw POSIXFailure(operation: "posix_spawn \(executable)", code: result) }
        return pid
    }

    var hostPort: HostPort { HostPort(host: "127.0.0.1", port: port) }

    func stop() {
        kill(pid, SIGTERM)
        var status: Int32 = 0
        while waitpid(pid, &status, 0) < 0 && errno == EINTR {}
    }
}

/// `dig` against a server on 127.0.0.1: the answer section (`+short` unless `extra` says otherwise).
func dig(port: Int, _ name: String, source: String? = nil, _ extra: [String] = ["+short"]) async throws -> String {
    var arguments = ["@127.0.0.1", "-p", "\(port)", name, "A", "+tries=1", "+time=2"] + extra
    if let source { arguments += ["-b", source] }
    return try await run("/usr/bin/dig", arguments).stdout
}

/// The whole helper (`HelperMain.run`) in this process, on a free port, with a configuration the
/// test changes and reloads (as SIGHUP would, through a `ReloadHandle`).
final class ReloadableHelper: Sendable {
    let directory: String
    let port: Int
    /// What the helper said (about a reload, a shutdown), as "level message".
    let log = CapturedLog()
    let handle = ReloadHandle()
    /// What the next reload reads: a configuration, or an error as a bad file gives.
    let next: NextConfiguration
    let start: HelperConfiguration
    private let running: Mutex<Task<Void, any Error>?> = Mutex(nil)

    var socket: String { start.paths.controlSocket }

    static var catalog: String {
        URL(fileURLWithPath: #filePath).deletingLastPathComponent().deletingLastPathComponent().deletingLastPathComponent()
            .appendingPathComponent("blocklists").path
    }

    /// - Parameter configure: changes the start configuration (upstream, profiles, …).
    init(upstream: UpstreamResolver, configure: (inout HelperConfiguration, String) throws -> Void = { _, _ in }) async throws {
        directory = try makeTemporaryDirectory()
        port = try freeLoopbackPort()
        var paths = RuntimePaths.defaults(isRoot: false, environment: ["HOME": directory])
        paths.stateDirectory = directory + "/state"
        paths.controlSocket = directory + "/ctl.sock"
        paths.configFile = directory + "/scrolloff.toml"
        var configuration = HelperConfiguration(
            paths: paths, listen: [HostPort(host: "127.0.0.1", port: port)], upstreams: [upstream.hostPort], eventLoops: 1)
        configuration.catalogPath = Self.catalog
        configuration.defaultProfile = ProfileSettings(name: "default", timeZoneID: "UTC")
        try configure(&configuration, directory)
        start = configuration
        next = NextConfiguration(.success(configuration))
        let next = self.next
        let logger = log.logger()
        let handle = handle
        let task = Task {
            try await HelperMain.run(configuration, logger: logger, reloadConfiguration: {
                try next.read()
            }, reloads: handle)
        }
        running.withLock { $0 = task }
        let port = port
        // 30 s: beside the other end-to-end suites on 2 cores a start once took over 10 s.
        guard await eventually(within: 30, { handle.isReady }),
              await eventually(within: 30, { (try? await dig(port: port, "ready.probe"))?.contains(upstream.address) == true })
        else {
            task.cancel()
            throw POSIXFailure(operation: "start the helper: \(log.lines.joined(separator: "\n"))", code: 0)
        }
    }

    /// Sets what the next reload reads and reloads.
    func reload(_ change: (inout HelperConfiguration) -> Void) async -> ReloadReport? {
        next.value.withLock { result in
            var configuration = (try? result.get()) ?? start
            change(&configuration)
            result = .success(configuration)
        }
        return await handle.reload()
    }

    /// A reload whose file does not parse.
    func reloadFailing(_ message: String) async -> ReloadReport? {
        let previous = next.value.withLock { $0 }
        next.value.withLock { $0 = .failure(ConfigurationRejected(message)) }
        defer { next.value.withLock { $0 = previous } }
        return await handle.reload()
    }

    func query(_ name: String, source: String? = nil, _ extra: [String] = ["+short"]) async throws -> String {
        try await dig(port: port, name, source: source, extra)
    }

    func stop() async {
        let task = running.withLock { $0 }
        task?.cancel()
        _ = try? await task?.value
        try? FileManager.default.removeItem(atPath: directory)
    }
}

/// What the next reload of a `ReloadableHelper` reads: a configuration, or an error as a bad file gives.
final class NextConfiguration: Sendable {
    let value: Mutex<Result<HelperConfiguration, ConfigurationRejected>>
    /// Files the next reloads read one each, in order, before `value` again: two reloads asked at
    /// once read two different files, as two quick edits each followed by SIGHUP would.
    let queued = Mutex<[HelperConfiguration]>([])
    init(_ initial: Result<HelperConfiguration, ConfigurationRejected>) { value = Mutex(initial) }

    func read() throws -> HelperConfiguration {
        if let first = queued.withLock({ $0.isEmpty ? nil : $0.removeFirst() }) {
            value.withLock { $0 = .success(first) }
            return first
        }
        return try value.withLock { try $0.get() }
    }
}
