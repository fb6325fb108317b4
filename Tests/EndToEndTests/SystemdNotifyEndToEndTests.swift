import Foundation
import TestSupport
import Testing

/// The real scrolloff-dns under a stand-in for systemd's notify socket (Type=notify, sd_notify(3)).
struct SystemdNotifyEndToEndTests {
    /// A bound Unix datagram socket named in NOTIFY_SOCKET, as systemd would bind it.
    final class NotifySocket {
        let descriptor: Int32
        let name: String
        let path: String?

        init(scratch: Scratch, abstract: Bool) throws {
            let unique = "scrolloff-e2e-notify-\(UUID().uuidString.prefix(8))"
            path = abstract ? nil : "\(scratch.path)/notify"
            name = path ?? "@" + unique
            descriptor = socket(AF_UNIX, Int32(SOCK_DGRAM.rawValue), 0)
            var address = sockaddr_un()
            address.sun_family = sa_family_t(AF_UNIX)
            var bytes = Array(name.utf8)
            if abstract { bytes[0] = 0 }
            withUnsafeMutableBytes(of: &address.sun_path) { $0.copyBytes(from: bytes) }
            let length = socklen_t(MemoryLayout<sa_family_t>.size + bytes.count + (abstract ? 0 : 1))
            let bound = withUnsafePointer(to: &address) { $0.withMemoryRebound(to: sockaddr.self, capacity: 1) { bind(descriptor, $0, length) } }
            guard bound == 0 else { throw HarnessError("cannot bind the notify socket \(name): errno \(errno)") }
            var timeout = timeval(tv_sec: 15, tv_usec: 0)
            setsockopt(descriptor, SOL_SOCKET, SO_RCVTIMEO, &timeout, socklen_t(MemoryLayout<timeval>.size))
        }

        /// Messages until one has `key` (15 s at most per message); returns all of them, that one last.
        func receive(until key: String) throws -> [String] {
            var messages: [String] = []
            while true {
                var buffer = [UInt8](repeating: 0, count: 4096)
                let count = recv(descriptor, &buffer, buffer.count, 0)
                guard count >= 0 else { throw HarnessError("no \(key) from scrolloff-dns; got \(messages)") }
                let message = String(decoding: buffer[0..<count], as: UTF8.self)
                messages.append(message)
                if message.split(separator: "\n").contains(Substring(key)) { return messages }
            }
        }

        deinit { close(descriptor) }
    }

    /// Whether a Unix stream socket at `path` accepts a connection now.
    static func accepts(unixSocket path: String) -> Bool {
        let descriptor = socket(AF_UNIX, Int32(SOCK_STREAM.rawValue), 0)
        guard descriptor >= 0 else { return false }
        defer { close(descriptor) }
        var address = sockaddr_un()
        address.sun_family = sa_family_t(AF_UNIX)
        withUnsafeMutableBytes(of: &address.sun_path) { $0.copyBytes(from: Array(path.utf8)) }
        let length = socklen_t(MemoryLayout<sockaddr_un>.size)
        return withUnsafePointer(to: &address) {
            $0.withMemoryRebound(to: sockaddr.self, capacity: 1) { connect(descriptor, $0, length) }
        } == 0
    }

    /// SPEC §13: `systemctl start scrolloff-dns && scrolloff doctor` must find the control socket
    /// (and the metrics endpoint, when on) answering the moment systemd hears READY=1.
    @Test(arguments: [false, true])
    func at_ready_the_control_socket_and_the_metrics_listener_already_answer(_ metrics: Bool) throws {
        let scratch = try Scratch()
        let upstream = try Dnsmasq(scratch: scratch)
        let notify = try NotifySocket(scratch: scratch, abstract: false)
        let control = "\(scratch.path)/control.sock"
        let child = try HelperLaunch(
            executable: Products.scrolloffDNS, upstreams: [HelperLaunch.loopback(upstream.port)], stateDirectory: "\(scratch.path)/state",
            controlSocket: control, extra: metrics ? ["--metrics", "127.0.0.1:0"] : [], environment: ["NOTIFY_SOCKET": notify.name]
        ).spawn(scratch: scratch, label: "notify-ready")

        _ = try notify.receive(until: "READY=1")
        // Checked before anything else, while the helper may still be starting other services.
        #expect(Self.accepts(unixSocket: control), "\(child.stderr)")
        let metricsLine = child.stdout.split(separator: "\n").first { $0.hasPrefix("listening metrics 127.0.0.1:") }
        #expect((metricsLine != nil) == metrics, "\(child.stdout)")
        let status = try Spawned(Products.scrolloff, ["status", "--socket", control],
                                 stdout: "\(scratch.path)/status.out", stderr: "\(scratch.path)/status.err").wait()
        #expect(status == 0, "\(scratch.read("status.out")) \(scratch.read("status.err"))")
        if let port = metricsLine?.split(separator: ":").last.flatMap({ Int($0) }) {
            let scrape = try run("/usr/bin/curl", ["-sS", "--max-time", "5", "http://127.0.0.1:\(port)/metrics"])
            #expect(scrape.contains("scrolloff_build_info"), "\(scrape)")
        }
    }

    /// A SIGHUP while the helper is still starting (logrotate, an early `systemctl reload`) is
    /// ignored or applied, never the default action that kills the process.
    @Test func sighup_right_after_the_first_listening_line_keeps_the_helper_running() throws {
        let scratch = try Scratch()
        let upstream = try Dnsmasq(scratch: scratch)
        let child = try HelperLaunch(
            executable: Products.scrolloffDNS, upstreams: [HelperLaunch.loopback(upstream.port)], stateDirectory: "\(scratch.path)/state",
            controlSocket: "\(scratch.path)/control.sock"
        ).spawn(scratch: scratch, label: "early-hup")
        _ = try child.waitForLine(seconds: 30) { $0.hasPrefix("listening ") }
        child.signal(SIGHUP)
        let port = try child.listeningPort()
        #expect(try dig(port, ["+short", "host.test"]) == "10.0.0.7\n", "\(child.stderr)")
        #expect(child.isRunning, "\(child.stderr)")
        child.signal(SIGTERM)
        #expect(child.process.wait() == 0)
    }

    @Test(arguments: [false, true])
    func ready_after_listening_then_reloading_and_ready_on_sighup_then_stopping_on_sigterm(_ abstract: Bool) throws {
        let scratch = try Scratch()
        let upstream = try Dnsmasq(scratch: scratch)
        let notify = try NotifySocket(scratch: scratch, abstract: abstract)
        // env(1) execs the helper in place, so the pid is the helper's.
        let child = try HelperLaunch(
            executable: Products.scrolloffDNS, upstreams: [HelperLaunch.loopback(upstream.port)], stateDirectory: "\(scratch.path)/state",
            controlSocket: "\(scratch.path)/control.sock", environment: ["NOTIFY_SOCKET": notify.name]
        ).spawn(scratch: scratch, label: "notify")

        let start = try notify.receive(until: "READY=1")
        #expect(start.dropLast().allSatisfy { !$0.contains("READY=1") && !$0.contains("STOPPING=1") }, "\(start)")
        // By READY=1 every listener is bound and announced.
        let lines = child.stdout.split(separator: "\n")
        let udp = try #require(lines.first { $0.hasPrefix("listening udp 127.0.0.1:") }, "\(child.stdout)")
        #expect(lines.contains { $0.hasPrefix("listening tcp 127.0.0.1:") }, "\(child.stdout)")
        let port = try #require(udp.split(separator: ":").last.flatMap { Int($0) })
        #expect(start.last?.contains("STATUS=answering DNS on 127.0.0.1:\(port)") == true, "\(start)")
        #expect(try dig(port, ["+short", "host.test"]) == "10.0.0.7\n")

        child.signal(SIGHUP)
        let reload = try notify.receive(until: "RELOADING=1")
        #expect(reload.last?.contains("MONOTONIC_USEC=") == true, "\(reload)")
        _ = try notify.receive(until: "READY=1")

        child.signal(SIGTERM)
        _ = try notify.receive(until: "STOPPING=1")
        #expect(child.process.wait() == 0)
    }
}
