#if canImport(Glibc)
import Glibc
#endif
import Foundation
import Logging
import Testing

@testable import Helper

/// sd_notify(3) without libsystemd: the address encoding and real datagrams on a real socket.
struct SystemdNotifierTests {
    @Test func an_abstract_name_starts_with_a_nul_and_its_length_has_no_terminator() throws {
        let destination = try NotifyDestination("@scrolloff/notify")
        #expect(destination.path == [0] + Array("scrolloff/notify".utf8))
        #expect(destination.isAbstract)
        #expect(Int(destination.addressLength) == MemoryLayout<sa_family_t>.size + 17)
    }

    @Test func a_path_keeps_its_bytes_and_counts_its_terminator() throws {
        let destination = try NotifyDestination("/run/systemd/notify")
        #expect(destination.path == Array("/run/systemd/notify".utf8))
        #expect(Int(destination.addressLength) == MemoryLayout<sa_family_t>.size + 19 + 1)
    }

    @Test(arguments: [
        ("run/systemd/notify", NotifyError.notASocketAddress("run/systemd/notify")),
        ("/" + String(repeating: "a", count: 120), NotifyError.tooLong("/" + String(repeating: "a", count: 120))),
    ])
    func a_relative_or_overlong_address_is_refused(_ value: String, _ expected: NotifyError) {
        #expect(throws: expected) { try NotifyDestination(value) }
    }

    @Test func without_notify_socket_nothing_is_sent() {
        #expect(SystemdNotifier(environment: [:], logger: Logger(label: "test")).destination == nil)
        #expect(SystemdNotifier(environment: ["NOTIFY_SOCKET": ""], logger: Logger(label: "test")).destination == nil)
    }

    @Test(arguments: [true, false])
    func messages_arrive_as_one_datagram_each(_ abstract: Bool) throws {
        let receiver = try DatagramReceiver(abstract: abstract)
        let notifier = SystemdNotifier(environment: ["NOTIFY_SOCKET": receiver.name], logger: Logger(label: "test"))
        notifier.ready(status: "answering DNS on 127.0.0.1:53")
        notifier.reloading(status: "reloading")
        notifier.stopping(status: "stopping")
        #expect(try receiver.receive() == "READY=1\nSTATUS=answering DNS on 127.0.0.1:53\n")
        let reloading = try receiver.receive().split(separator: "\n")
        #expect(reloading.first == "RELOADING=1")
        // MONOTONIC_USEC is CLOCK_MONOTONIC in microseconds, as systemd compares it with its own.
        let stamp = try #require(reloading.first(where: { $0.hasPrefix("MONOTONIC_USEC=") }).flatMap { UInt64($0.dropFirst(15)) })
        #expect(stamp > 0 && stamp <= SystemdNotifier.monotonicMicroseconds())
        #expect(try receiver.receive() == "STOPPING=1\nSTATUS=stopping\n")
    }
}

/// A bound Unix datagram socket standing in for systemd's notify socket.
final class DatagramReceiver {
    let descriptor: Int32
    let name: String
    let path: String?

    init(abstract: Bool) throws {
        let unique = "scrolloff-notify-\(getpid())-\(UInt32.random(in: 0...UInt32.max))"
        path = abstract ? nil : NSTemporaryDirectory() + unique
        name = abstract ? "@" + unique : (NSTemporaryDirectory() + unique)
        descriptor = socket(AF_UNIX, Int32(SOCK_DGRAM.rawValue), 0)
        var address = sockaddr_un()
        address.sun_family = sa_family_t(AF_UNIX)
        var bytes = Array(name.utf8)
        if abstract { bytes[0] = 0 }
        withUnsafeMutableBytes(of: &address.sun_path) { $0.copyBytes(from: bytes) }
        let length = socklen_t(MemoryLayout<sa_family_t>.size + bytes.count + (abstract ? 0 : 1))
        let bound = withUnsafePointer(to: &address) { $0.withMemoryRebound(to: sockaddr.self, capacity: 1) { bind(descriptor, $0, length) } }
        guard bound == 0 else { throw POSIXError(.init(rawValue: errno) ?? .EINVAL) }
        var timeout = timeval(tv_sec: 10, tv_usec: 0)
        setsockopt(descriptor, SOL_SOCKET, SO_RCVTIMEO, &timeout, socklen_t(MemoryLayout<timeval>.size))
    }

    /// The next datagram as text (waits up to 10 s).
    func receive() throws -> String {
        var buffer = [UInt8](repeating: 0, count: 4096)
        let count = recv(descriptor, &buffer, buffer.count, 0)
        guard count >= 0 else { throw POSIXError(.init(rawValue: errno) ?? .EIO) }
        return String(decoding: buffer[0..<count], as: UTF8.self)
    }

    deinit {
        close(descriptor)
        if let path { unlink(path) }
    }
}
