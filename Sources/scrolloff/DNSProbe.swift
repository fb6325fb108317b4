import ControlAPI
import DNSWire
import DoctorChecks
import Foundation
#if canImport(Glibc)
import Glibc
#endif

/// A one-question DNS client for `doctor`'s probes, over UDP or TCP (RFC 1035 §4.2), with one
/// deadline for the whole exchange. Built on DNSWire, so the answer is read by the same total
/// parser as the sinkhole's; blocking sockets, because the CLI asks a handful of questions and exits.
enum DNSProbe {
    enum Transport { case udp, tcp }

    /// Asks `name` (type A) of `host`:`port` and waits at most `timeout` seconds.
    static func ask(_ name: String, type: DNSType = .a, host: String, port: Int, over transport: Transport = .udp,
                    timeout: Double = 2) -> ProbeResult {
        let question: DNSName
        do { question = try DNSName(name) } catch { return .failed("“\(name)” is not a DNS name (\(error))") }
        let id = UInt16.random(in: 0...UInt16.max)
        let query = DNSMessage(
            header: DNSHeader(id: id, recursionDesired: true), questions: [DNSQuestion(name: question, type: type)])
        let bytes: [UInt8]
        do { bytes = try query.serialize() } catch { return .failed("the query could not be written (\(error))") }
        guard let address = SocketAddressBytes(host: host, port: port) else { return .failed("“\(host)” is not an address") }

        let fd = socket(address.family, Int32(transport == .udp ? SOCK_DGRAM.rawValue : SOCK_STREAM.rawValue), 0)
        guard fd >= 0 else { return .failed("no socket: \(String(cString: strerror(errno)))") }
        defer { close(fd) }
        let clock = ContinuousClock()
        let start = clock.now
        let deadline = start + .milliseconds(Int64(timeout * 1000))
        var timeoutValue = timeval(tv_sec: Int(timeout), tv_usec: Int((timeout - timeout.rounded(.down)) * 1_000_000))
        // Bounds a TCP connect to a silent address: Linux applies SO_SNDTIMEO to connect(2).
        setsockopt(fd, SOL_SOCKET, SO_SNDTIMEO, &timeoutValue, socklen_t(MemoryLayout<timeval>.size))
        guard address.withSockaddr({ connect(fd, $0, $1) }) == 0 else { return .failed(failure(errno, timeout: timeout)) }

        let reply: [UInt8]
        switch transport {
        case .udp:
            guard send(fd, bytes, bytes.count, 0) == bytes.count else { return .failed(failure(errno, timeout: timeout)) }
            // Datagrams from the connected peer that are not our answer (a late reply to an
            // earlier query) are skipped until the deadline.
            var answer: [UInt8]?
            while answer == nil {
                guard let datagram = receive(fd, upTo: 65_535, deadline: deadline, clock: clock) else {
                    return .failed(failure(errno, timeout: timeout))
                }
                if isAnswer(datagram, id: id, to: question) { answer = datagram }
            }
            reply = answer ?? []
        case .tcp:
            let framed = [UInt8(bytes.count >> 8), UInt8(bytes.count & 0xFF)] + bytes
            guard send(fd, framed, framed.count, Int32(MSG_NOSIGNAL)) == framed.count else { return .failed(failure(errno, timeout: timeout)) }
            guard let length = readExactly(fd, 2, deadline: deadline, clock: clock),
                  let message = readExactly(fd, Int(length[0]) << 8 | Int(length[1]), deadline: deadline, clock: clock),
                  isAnswer(message, id: id, to: question)
            else { return .failed(failure(errno, timeout: timeout)) }
            reply = message
        }
        let elapsed = clock.now - start
        let milliseconds = Int(elapsed.components.seconds * 1000 + elapsed.components.attoseconds / 1_000_000_000_000_000)
        guard let message = try? DNSMessage(parsing: reply) else { return .failed("the reply could not be parsed") }
        let addresses = message.answers.compactMap { record -> String? in
            switch record.rdata {
            case .a(let address): address.description
            case .aaaa(let address): address.description
            default: nil
            }
        }
        return .answered(ProbeAnswer(rcode: message.rcode.description, addresses: addresses, answerCount: message.answers.count,
                                     milliseconds: milliseconds))
    }

    /// A response with our id and our question (RFC 5452 §9.1: match both, not the id alone).
    static func isAnswer(_ bytes: [UInt8], id: UInt16, to question: DNSName) -> Bool {
        guard let message = try? DNSMessage(parsing: bytes) else { return false }
        return message.header.isResponse && message.header.id == id
            && message.questions.first.map { $0.name.lowercased == question.lowercased } ?? false
    }

    /// Waits for readable data until `deadline`; nil (with errno set) on timeout or error.
    static func receive(_ fd: Int32, upTo size: Int, deadline: ContinuousClock.Instant, clock: ContinuousClock) -> [UInt8]? {
        let left = deadline - clock.now
        let ms = Int32(clamping: max(0, left.components.seconds * 1000 + left.components.attoseconds / 1_000_000_000_000_000))
        var poller = pollfd(fd: fd, events: Int16(POLLIN), revents: 0)
        let ready = poll(&poller, 1, ms)
        guard ready > 0 else {
            if ready == 0 { errno = ETIMEDOUT }
            return nil
        }
        var buffer = [UInt8](repeating: 0, count: size)
        let count = recv(fd, &buffer, size, 0)
        guard count > 0 else {
            if count == 0 { errno = ECONNRESET }
            return nil
        }
        return Array(buffer.prefix(count))
    }

    static func readExactly(_ fd: Int32, _ count: Int, deadline: ContinuousClock.Instant, clock: ContinuousClock) -> [UInt8]? {
        var collected: [UInt8] = []
        while collected.count < count {
            guard let chunk = receive(fd, upTo: count - collected.count, deadline: deadline, clock: clock) else { return nil }
            collected += chunk
        }
        return collected
    }

    static func failure(_ code: Int32, timeout: Double) -> String {
        switch code {
        case ETIMEDOUT, EAGAIN, EINPROGRESS: "no answer within \(timeout == timeout.rounded() ? "\(Int(timeout))" : "\(timeout)") s"
        case ECONNREFUSED: "connection refused: nothing listens there"
        default: String(cString: strerror(code))
        }
    }
}

/// A `sockaddr_in` or `sockaddr_in6` for a literal address.
struct SocketAddressBytes {
    let family: Int32
    private var storage = sockaddr_storage()
    private let length: socklen_t

    init?(host: String, port: Int) {
        guard (0...65535).contains(port) else { return nil }
        if host.contains(":") {
            var address = sockaddr_in6()
            address.sin6_family = sa_family_t(AF_INET6)
            address.sin6_port = in_port_t(UInt16(port)).bigEndian
            guard inet_pton(AF_INET6, host, &address.sin6_addr) == 1 else { return nil }
            family = AF_INET6
            length = socklen_t(MemoryLayout<sockaddr_in6>.size)
            withUnsafeMutableBytes(of: &storage) { raw in withUnsafeBytes(of: address) { raw.copyMemory(from: $0) } }
        } else {
            var address = sockaddr_in()
            address.sin_family = sa_family_t(AF_INET)
            address.sin_port = in_port_t(UInt16(port)).bigEndian
            guard inet_pton(AF_INET, host, &address.sin_addr) == 1 else { return nil }
            family = AF_INET
            length = socklen_t(MemoryLayout<sockaddr_in>.size)
            withUnsafeMutableBytes(of: &storage) { raw in withUnsafeBytes(of: address) { raw.copyMemory(from: $0) } }
        }
    }

    func withSockaddr<R>(_ body: (UnsafePointer<sockaddr>, socklen_t) -> R) -> R {
        var copy = storage
        return withUnsafePointer(to: &copy) { $0.withMemoryRebound(to: sockaddr.self, capacity: 1) { body($0, length) } }
    }
}
