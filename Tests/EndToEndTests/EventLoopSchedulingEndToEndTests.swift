import Foundation
import TestSupport
import Testing

/// The real helper's event loops and UDP listener threads as the kernel sees them (SPEC §9, "a
/// list refresh never stalls answers"): one of each per core the helper may run on, each with the
/// short time slice that lets a waking thread preempt list work, and a burst larger than one
/// receive batch answered whole. In
/// every privilege mode: the slice is asked for by the helper's own threads, without a capability.
@Suite struct EventLoopSchedulingEndToEndTests {
    @Test(arguments: PrivilegeMode.allCases)
    func a_helper_pinned_to_one_core_runs_one_short_slice_event_loop_and_answers_a_burst(mode: PrivilegeMode) throws {
        let scratch = try Scratch()
        let upstream = try Dnsmasq(scratch: scratch)
        let server = try Sinkhole(
            scratch: scratch, upstreams: [upstream.port], blocklist: ["blocked.test"], mode: mode,
            wrapper: [.command(["/usr/bin/taskset", "-c", "0"])])
        mode.check(server.child.process.pid)
        let loops = try HelperThread.eventLoops(of: server.child.process.pid)
        // Two loops on one core only took turns: every query woke both.
        #expect(loops.count == 1, "\(mode): \(loops)")
        // One UDP listener thread per loop and listen address (`DatagramListener`).
        let listeners = try HelperThread.udpListeners(of: server.child.process.pid, count: 1)
        #expect(listeners.count == 1, "\(mode): \(listeners)")
        // Plus one thread that only accepts TCP connections, for any number of cores: it is not an
        // answering loop, so it does not take turns with one (`DNSServer`).
        let accept = try HelperThread.tcpAcceptor(of: server.child.process.pid)
        #expect(accept.count == 1, "\(mode): \(accept)")
        if KernelRelease.hasFairSlices {
            #expect((loops + listeners + accept).allSatisfy { $0.sliceNanoseconds == 100_000 }, "\(mode): \(loops + listeners + accept)")
        }
        // 300 datagrams sent before any reply is read: more than nine receive batches of 32, each
        // read with one recvmmsg per wake-up; every one is answered, blocked or from the zone.
        let burst = try python(server.port, Self.burst, scratch: scratch)
        #expect(burst == "answered 300 wrong 0\n", "\(mode): \(burst)")
        #expect(try dig(server.port, ["+tcp", "+short", "www.blocked.test"]).contains("0.0.0.0"))
        #expect(server.child.isRunning, "\(mode): \(server.child.stderr)")
    }

    @Test func an_unpinned_helper_runs_one_short_slice_event_loop_per_allowed_core() throws {
        let scratch = try Scratch()
        let upstream = try Dnsmasq(scratch: scratch)
        let server = try Sinkhole(scratch: scratch, upstreams: [upstream.port])
        let pid = server.child.process.pid
        let loops = try HelperThread.eventLoops(of: pid)
        // NIO also counts a CPU quota (`cpu.max` of a container); the helper takes the fewer.
        let expected = min(try HelperThread.allowedCores(of: pid), HelperThread.quotaCores ?? .max)
        #expect(loops.count == expected, "\(loops)")
        let listeners = try HelperThread.udpListeners(of: pid, count: expected)
        #expect(listeners.count == expected, "\(listeners)")
        // One thread accepts the TCP connections, whatever the cores: accepting must not wait behind
        // answering (slow readers' pipelines kept a shared loop from accepting another client).
        let accept = try HelperThread.tcpAcceptor(of: pid)
        #expect(accept.count == 1, "\(accept)")
        if KernelRelease.hasFairSlices {
            #expect((loops + listeners + accept).allSatisfy { $0.sliceNanoseconds == 100_000 }, "\(loops + listeners + accept)")
        }
        // The helper's other threads keep the kernel's default slice: only the threads that answer
        // DNS or accept its connections are favoured.
        let others = try HelperThread.threads(of: pid).filter {
            !$0.name.hasPrefix("NIO-ELT-") && $0.name != "scrolloff-udp" && $0.name != "scrolloff-tcp"
        }
        #expect(!others.isEmpty && others.allSatisfy { $0.sliceNanoseconds != 100_000 }, "\(others)")
        #expect(try shortA(server.port, "host.test") == "10.0.0.7")
    }

    /// Sends 300 queries from one socket, then reads the replies; prints how many came and how
    /// many did not match their question.
    static let burst = """
        import socket, dns.message, dns.rdatatype
        s = socket.socket(socket.AF_INET, socket.SOCK_DGRAM)
        s.setsockopt(socket.SOL_SOCKET, socket.SO_RCVBUF, 1 << 20)
        expected = {}
        for i in range(300):
            name = "n%d.blocked.test" % i if i % 2 else "host.test"
            q = dns.message.make_query(name, "A")
            q.id = i
            expected[i] = "0.0.0.0" if i % 2 else "10.0.0.7"
            s.sendto(q.to_wire(), ("127.0.0.1", PORT))
        s.settimeout(5)
        answered = wrong = 0
        try:
            while answered < 300:
                r = dns.message.from_wire(s.recv(4096))
                answered += 1
                got = [rd.address for rr in r.answer for rd in rr if rr.rdtype == dns.rdatatype.A]
                if expected.pop(r.id, None) not in got: wrong += 1
        except socket.timeout:
            pass
        print("answered %d wrong %d" % (answered, wrong))
        """
}

/// One thread of a process, read from /proc/PID/task/TID: its name and its fair-class slice.
struct HelperThread: CustomStringConvertible {
    let name: String
    let sliceNanoseconds: Int?

    var description: String { "\(name) slice \(sliceNanoseconds.map(String.init) ?? "?")" }

    static func threads(of pid: pid_t) throws -> [HelperThread] {
        let tasks = "/proc/\(pid)/task"
        return try FileManager.default.contentsOfDirectory(atPath: tasks).compactMap { tid in
            guard let name = try? String(contentsOfFile: "\(tasks)/\(tid)/comm", encoding: .utf8),
                  let sched = try? String(contentsOfFile: "\(tasks)/\(tid)/sched", encoding: .utf8) else { return nil }
            let slice = sched.split(separator: "\n").first { $0.hasPrefix("se.slice") }
                .flatMap { $0.split(separator: ":").last }
                .flatMap { Int($0.trimmingCharacters(in: .whitespaces)) }
            return HelperThread(name: name.trimmingCharacters(in: .newlines), sliceNanoseconds: slice)
        }
    }

    /// The DNS event loops: NIO names its group threads `NIO-ELT-<group>-#<n>` (the helper's
    /// control and page server run on NIO's singleton group, `NIO-SGLTN-…`).
    static func eventLoops(of pid: pid_t) throws -> [HelperThread] {
        try threads(of: pid).filter { $0.name.hasPrefix("NIO-ELT-") }
    }

    /// The threads that read the UDP sockets, one per loop and listen address. A thread takes its
    /// name when it starts serving, which may come just after the "listening" lines the harness
    /// waits for: so up to 5 s for `count` of them.
    static func udpListeners(of pid: pid_t, count: Int) throws -> [HelperThread] {
        var found: [HelperThread] = []
        for _ in 0..<50 {
            found = try threads(of: pid).filter { $0.name == "scrolloff-udp" }
            if found.count >= count { break }
            Thread.sleep(forTimeInterval: 0.1)
        }
        return found
    }

    /// The thread that accepts DNS-over-TCP connections (`DNSServer`), named before the helper says
    /// it is listening.
    static func tcpAcceptor(of pid: pid_t) throws -> [HelperThread] {
        try threads(of: pid).filter { $0.name == "scrolloff-tcp" }
    }

    /// Whole CPUs of the cgroup v2 quota at the mount's root (`cpu.max`: "max 100000" is none),
    /// rounded up as NIO rounds it.
    static var quotaCores: Int? {
        guard let text = try? String(contentsOfFile: "/sys/fs/cgroup/cpu.max", encoding: .utf8) else { return nil }
        let fields = text.split(whereSeparator: \.isWhitespace)
        guard fields.count == 2, let quota = Double(fields[0]), let period = Double(fields[1]), period > 0 else { return nil }
        return Int((quota / period).rounded(.up))
    }

    /// The CPUs in the process's affinity mask (`Cpus_allowed_list: 0-1,4`).
    static func allowedCores(of pid: pid_t) throws -> Int {
        let status = try String(contentsOfFile: "/proc/\(pid)/status", encoding: .utf8)
        guard let line = status.split(separator: "\n").first(where: { $0.hasPrefix("Cpus_allowed_list:") }) else {
            throw HarnessError("no Cpus_allowed_list in /proc/\(pid)/status")
        }
        return line.dropFirst("Cpus_allowed_list:".count).split(separator: ",").reduce(0) { count, range in
            let bounds = range.trimmingCharacters(in: .whitespaces).split(separator: "-").compactMap { Int($0) }
            return count + (bounds.count == 2 ? bounds[1] - bounds[0] + 1 : 1)
        }
    }
}

/// The running kernel's release, for what only newer kernels do.
enum KernelRelease {
    /// Linux 6.12 added a per-thread slice for fair-class threads (`sched_attr.sched_runtime`).
    static var hasFairSlices: Bool {
        var name = utsname()
        uname(&name)
        let release = withUnsafeBytes(of: name.release) { String(decoding: $0.prefix { $0 != 0 }, as: UTF8.self) }
        let parts = release.split(whereSeparator: { !$0.isNumber }).prefix(2).compactMap { Int($0) }
        guard parts.count == 2 else { return false }
        return (parts[0], parts[1]) >= (6, 12)
    }
}
