import Foundation
import TestSupport

/// The real helper with the household page on 127.0.0.1:0 and two profiles told apart by the
/// client address, as a household's devices are: `kid` (127.0.0.2, owned by uid 65534 `nobody`)
/// and `parent` (127.0.0.3, no owner). Loopback has all of 127/8, so curl's `--interface` makes
/// each request come from the device it stands for.
final class HouseholdHelper: @unchecked Sendable {
    static let ownerName = "nobody"
    static let ownerPassword = "correct horse battery"

    let scratch: Scratch
    private(set) var child: Child
    let state: String
    let socket: String
    private(set) var webPort: Int
    private let config: String
    private let extra: [String]
    /// Runs the helper through this (such as `ip netns exec NAME`), and serves the page here.
    private let wrapper: [HelperLaunch.Wrapper]
    private let webListen: String
    /// Root, or root under the unit's capabilities (the state folder is root's, so not an ordinary user).
    let mode: PrivilegeMode
    private var starts = 0

    /// - Parameter environment: for the helper, through `/usr/bin/env` (so LD_PRELOAD reaches the
    ///   helper itself), such as ``FakeClock/allClocks(startingAt:)``.
    /// - Parameter configuration: more of the configuration file, after the profiles (a `[web]` table).
    init(scratch: Scratch, ownerPassword: Bool = false, extra: [String] = [], environment: [String: String] = [:],
         configuration: String = "", wrapper: [HelperLaunch.Wrapper] = [], webListen: String = "127.0.0.1:0",
         mode: PrivilegeMode = .root) throws {
        guard mode != .ordinaryUser else { throw HarnessError("HouseholdHelper keeps its state in root's scratch folder: root modes only") }
        self.scratch = scratch
        self.mode = mode
        state = "\(scratch.path)/state"
        socket = "\(scratch.path)/control.sock"
        config = try scratch.file("scrolloff.toml", """
            [[profiles]]
            name = "kid"
            clients = ["127.0.0.2/32"]
            owners = [65534]

            [[profiles]]
            name = "parent"
            clients = ["127.0.0.3/32"]

            """ + configuration)
        if ownerPassword {
            // Before the start: the helper reads the file at each sign-in, so this order is only for speed.
            let set = try runWithStatus("/bin/sh", ["-c", "printf '%s\\n' \"$0\" | \"$1\" web passwd \"$2\" --state-dir \"$3\"",
                                                    Self.ownerPassword, Products.scrolloffDNS, Self.ownerName, state])
            guard set.exitCode == 0 else { throw HarnessError("web passwd failed: \(set)") }
        }
        self.extra = extra
        self.wrapper = wrapper
        self.webListen = webListen
        (child, webPort) = try Self.start(scratch: scratch, config: config, state: state, socket: socket, extra: extra,
                                          environment: environment, wrapper: wrapper, webListen: webListen, mode: mode,
                                          label: "household-\(UUID().uuidString)")
    }

    /// Stops the helper (SIGTERM) and starts a new one on the same state, configuration and socket.
    func restart(environment: [String: String] = [:]) throws {
        if child.isRunning {
            child.signal(SIGTERM)
            child.process.wait()
        }
        starts += 1
        (child, webPort) = try Self.start(scratch: scratch, config: config, state: state, socket: socket, extra: extra,
                                          environment: environment, wrapper: wrapper, webListen: webListen, mode: mode,
                                          label: "household-\(starts)-\(UUID().uuidString)")
    }

    private static func start(scratch: Scratch, config: String, state: String, socket: String, extra: [String],
                              environment: [String: String], wrapper: [HelperLaunch.Wrapper], webListen: String, mode: PrivilegeMode,
                              label: String) throws -> (Child, Int) {
        let child = try mode.applied(to: HelperLaunch(
            executable: Products.scrolloffDNS, upstreams: ["127.0.0.1:9"], stateDirectory: state, controlSocket: socket,
            config: config, webListen: webListen, extra: extra, wrappers: wrapper,
            environment: environment
        )).spawn(scratch: scratch, label: label)
        let line = try child.waitForLine { $0.hasPrefix("listening web ") }
        guard let port = line.split(separator: ":").last.flatMap({ Int($0) }) else { throw HarnessError("bad line: \(line)") }
        // After a restart the old socket file may still be there: wait for the new helper's own.
        try child.waitForControlSocket()
        return (child, port)
    }

    func cli(_ arguments: [String]) throws -> Outcome {
        try runWithStatus(Products.scrolloff, arguments + ["--socket", socket])
    }

    /// A browser on the device with `address`: its own cookie jar.
    func device(_ address: String) -> WebDevice {
        WebDevice(base: "http://127.0.0.1:\(webPort)", address: address, jar: "\(scratch.path)/jar-\(address)-\(UUID().uuidString)")
    }
}

/// One answer of the page: status, headers and body.
struct WebAnswer: CustomStringConvertible {
    var status: Int
    var headers: String
    var body: String
    var description: String { "HTTP \(status)\n\(headers)\n\(body)" }

    /// The CSRF token of the page's first form.
    var csrf: String? {
        guard let range = body.range(of: "name=\"csrf\" value=\"") else { return nil }
        return String(body[range.upperBound...].prefix { $0 != "\"" })
    }

    func header(_ name: String) -> String? {
        headers.split(separator: "\r\n").first { $0.lowercased().hasPrefix(name.lowercased() + ":") }
            .map { String($0.dropFirst(name.count + 1)).trimmingCharacters(in: .whitespaces) }
    }
}

/// curl from one source address with a cookie jar: a real HTTP client, as a phone would be.
struct WebDevice {
    let base: String
    let address: String
    let jar: String
    /// Runs curl as this uid (`setpriv`), as a person on the machine without root; its jar must be
    /// in a folder that uid may write.
    var user: UInt32? = nil
    /// Runs curl inside this network namespace (`ip netns exec`), as a device of a LAN.
    var namespace: String? = nil

    func get(_ path: String) throws -> WebAnswer { try request(["-G"], path) }

    /// A form POST; `csrf: nil` leaves the token out.
    func post(_ path: String, _ fields: [(String, String)], cookies: Bool = true) throws -> WebAnswer {
        try request(fields.flatMap { ["--data-urlencode", "\($0.0)=\($0.1)"] } + (fields.isEmpty ? ["-d", ""] : []), path, cookies: cookies)
    }

    private func request(_ extra: [String], _ path: String, cookies: Bool = true) throws -> WebAnswer {
        let headers = jar + ".headers-\(UUID().uuidString)"
        defer { try? FileManager.default.removeItem(atPath: headers) }
        let jarArguments = cookies ? ["-b", jar, "-c", jar] : []
        let inside = namespace.map { ["/usr/sbin/ip", "netns", "exec", $0] } ?? []
        let asUser = user.map { ["/usr/bin/setpriv", "--reuid=\($0)", "--regid=\($0)", "--clear-groups"] } ?? []
        let command = inside + asUser + ["/usr/bin/curl"]
        let output = try run(command[0], Array(command.dropFirst()) + ["-s", "--max-time", "30", "--interface", address, "-D", headers, "-w", "\n%{http_code}"]
            + jarArguments + extra + [base + path])
        let lines = output.split(separator: "\n", omittingEmptySubsequences: false)
        guard let last = lines.last, let status = Int(last) else { throw HarnessError("curl gave no status: \(output)") }
        let head = (try? String(contentsOfFile: headers, encoding: .utf8)) ?? ""
        return WebAnswer(status: status, headers: head, body: lines.dropLast().joined(separator: "\n"))
    }
}
