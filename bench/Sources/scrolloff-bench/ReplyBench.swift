// Full-reply benchmark: a query packet in, the reply bytes out, through the code the
// server runs — the helper's engine with a list added and blocked, its published policy, and
// `ResolverChain.standard` (gate, rate limit, canaries, policy, cache, forwarder) — with no socket
// in between. Prints CPU time and allocations per reply for the blocked path and the cache-hit
// path, first for the chain alone (parse → decide → reply written into the context's buffers),
// then with the copy into a reply slot of the batch that `DatagramListener` hands to `sendmmsg`.
//
// Run through bench/reply.sh, which starts the upstream (a dnsmasq answering *.cache.bench) and
// preloads bench/alloc_count.c. Usage: scrolloff-bench reply UPSTREAM_PORT [names] [replies]
import DNSWire
import DomainLists
import Engine
import Foundation
import Helper
import Logging
import NIOCore
import NIOPosix
import ScrollOffCore
import Sinkhole

enum ReplyBench {
    static func run(_ arguments: [String]) {
        guard let port = arguments.first.flatMap({ Int($0) }) else {
            print("usage: scrolloff-bench reply UPSTREAM_PORT [names] [replies]")
            exit(2)
        }
        let names = arguments.dropFirst().first.flatMap { Int($0) } ?? 200_000
        let replies = arguments.dropFirst(2).first.flatMap { Int($0) } ?? 2_000_000
        let outcome = Blocking.wait { await measure(upstreamPort: port, names: names, replies: replies) }
        exit(outcome)
    }
}

/// Runs async set-up from the synchronous bench entry point.
private enum Blocking {
    final class Box<T>: @unchecked Sendable { var value: T?; init() {} }

    static func wait<T: Sendable>(_ body: @escaping @Sendable () async -> T) -> T {
        let box = Box<T>()
        let done = DispatchSemaphore(value: 0)
        Task.detached {
            box.value = await body()
            done.signal()
        }
        done.wait()
        return box.value!
    }
}

/// A standard query (RD, class IN, no EDNS), as dnsperf sends it by default.
private func queryPacket(_ name: String, id: UInt16, type: UInt16 = 1) -> [UInt8] {
    var bytes: [UInt8] = [UInt8(id >> 8), UInt8(id & 0xFF), 0x01, 0x00, 0, 1, 0, 0, 0, 0, 0, 0]
    for label in name.split(separator: ".") {
        bytes.append(UInt8(label.utf8.count))
        bytes.append(contentsOf: label.utf8)
    }
    bytes += [0, UInt8(type >> 8), UInt8(type & 0xFF), 0, 1]
    return bytes
}

private func measure(upstreamPort: Int, names nameCount: Int, replies: Int) async -> Int32 {
    let logger = Logger(label: "scrolloff.bench")
    let folder = FileManager.default.temporaryDirectory.appendingPathComponent("scrolloff-reply-\(getpid())").path
    try? FileManager.default.createDirectory(atPath: folder, withIntermediateDirectories: true)
    defer { try? FileManager.default.removeItem(atPath: folder) }
    let catalogFolder = ProcessInfo.processInfo.environment["SCROLLOFF_CATALOG"] ?? "blocklists"

    // The list, as a person adds one: a file parsed by the helper's own parser, put in force by
    // the engine, then blocked together with a catalog service.
    let domains = Synthetic.domains(nameCount, seed: 42)
    var text = ""
    text.reserveCapacity(domains.bytes.count + nameCount)
    for index in 0..<domains.count { text += name(domains, index) + "\n" }
    let listPath = folder + "/bench.list"
    do { try text.write(toFile: listPath, atomically: false, encoding: .utf8) } catch {
        print("FAIL cannot write \(listPath): \(error)")
        return 1
    }
    let engine: HelperEngine
    do {
        let catalog = try EngineConfiguration.loadCatalog(folder: catalogFolder)
        engine = try await HelperEngine.start(
            configuration: EngineConfiguration(stateDirectory: folder + "/state", catalog: catalog, buildDate: Instant(millisecondsSince1970: 0)),
            timeSource: SystemTimeSource(), logger: logger)
        let parsed = HelperEngine.parseLists(files: ["bench": listPath], budget: .default)
        await engine.setLists(parsed.lists)
        _ = try await engine.block(["bench", "instagram"])
    } catch {
        print("FAIL the engine did not start or block: \(error)")
        return 1
    }

    let blocking = BlockingSettingsStore()
    let policies = PolicyStore(engine.currentQueryPolicy())
    let group = MultiThreadedEventLoopGroup(numberOfThreads: 1)
    let loop = group.next()
    let forwarder: Forwarder
    do {
        forwarder = Forwarder(
            configuration: ForwarderConfiguration(upstreams: [try SocketAddress(ipAddress: "127.0.0.1", port: upstreamPort)]),
            logger: logger)
    } catch {
        print("FAIL bad upstream port: \(error)")
        return 1
    }
    await forwarder.openSockets(on: group)
    // The chain the server builds (HelperMain), with the rate-limit link present and no limit set.
    let chain = ResolverChain.standard(
        policies: policies, canaries: CanaryLink(blocking: blocking), blocking: blocking,
        rateLimiter: ClientRateLimiter(nil), cache: AnswerCache(), forwarder: forwarder)
    let client = ClientAddress.v4(0x7F00_0001)

    // Half the listed names, half a subdomain of one: both blocked, as in bench/dns.sh.
    var rng = SystemRandomNumberGenerator()
    let blocked = (0..<4096).map { i -> [UInt8] in
        let picked = name(domains, Int.random(in: 0..<nameCount, using: &rng))
        return queryPacket(i % 2 == 0 ? picked : "www." + picked, id: UInt16(i & 0xFFFF))
    }
    let cached = (0..<100).map { queryPacket("c\($0).cache.bench", id: UInt16($0)) }

    let outcome = try? await loop.flatSubmit { () -> EventLoopFuture<[String]> in
        let context = QueryContext(eventLoop: loop)
        // Warm the cache: each cached name once through the forwarder.
        var waits: [EventLoopFuture<Void>] = []
        for packet in cached {
            let resolution = packet.withUnsafeBytes { chain.resolve(packet: $0, client: client, transport: .udp, in: context) }
            if case .later(let future) = resolution { waits.append(future.map { _ in () }) }
        }
        let bound = NIOLoopBound(context, eventLoop: loop)
        return EventLoopFuture.andAllSucceed(waits, on: loop).map { () -> [String] in
            let context = bound.value
            func run(_ label: String, _ packets: [[UInt8]], expecting: ReplyKind) -> [String] {
                // One untimed round first, so every buffer has its capacity and the check below
                // sees what each path answers.
                guard let first = packets.first,
                      replyKind(first.withUnsafeBytes { chain.resolve(packet: $0, client: client, transport: .udp, in: context) }) == expecting
                else { return ["FAIL \(label): the first query was not answered at once"] }
                // A reply slot as the UDP listener stages replies (`scrolloff_datagrams_stage`).
                let slot = UnsafeMutableRawBufferPointer.allocate(byteCount: DNSServerLimits.ednsPayloadSize, alignment: 16)
                defer { slot.deallocate() }
                var result: [String] = []
                for withCopy in [false, true] {
                    var bytes = 0
                    let before = AllocationCounter.read?()
                    let time = timed { () -> Int in
                        for index in 0..<replies {
                            let packet = packets[index % packets.count]
                            let resolution = packet.withUnsafeBytes { chain.resolve(packet: $0, client: client, transport: .udp, in: context) }
                            // What DatagramListener does before `sendmmsg`: one copy into the batch.
                            func send(_ reply: UnsafeRawBufferPointer) {
                                if withCopy {
                                    slot.copyMemory(from: reply)
                                    // Read back, so the copy is not optimized away: the reply's ID.
                                    bytes &+= slot[0] == reply[0] ? reply.count : 0
                                } else {
                                    bytes &+= reply.count
                                }
                            }
                            switch resolution {
                            case .builtReply: context.builder.withUnsafeBytes { send($0) }
                            case .scratchReply: context.scratch.withUnsafeBytes { send($0) }
                            default: return -1
                            }
                        }
                        return bytes
                    }
                    let after = AllocationCounter.read?()
                    guard time.result > 0 else { return ["FAIL \(label): a query was not answered at once"] }
                    let allocations = before.flatMap { b in after.map { Double($0 - b) / Double(replies) } }
                    let step = withCopy ? "chain + copy into the batch" : "chain (parse → decide → reply)"
                    result.append(
                        "\(label.padding(toLength: 10, withPad: " ", startingAt: 0)) \(step.padding(toLength: 31, withPad: " ", startingAt: 0))"
                            + " \(format(time.cpu / Double(replies) * 1e9)) ns CPU/reply, \(format(time.wall / Double(replies) * 1e9)) ns wall, "
                            + (allocations.map { "\(format($0, 3)) allocations/reply" } ?? "allocations not counted (run through bench/reply.sh)")
                            + ", \(bytes / replies) bytes/reply")
                }
                return result
            }
            var lines: [String] = []
            lines.append(contentsOf: run("blocked", blocked, expecting: .builtReply))
            lines.append(contentsOf: run("cache hit", cached, expecting: .scratchReply))
            return lines

        }
    }.get()
    try? await group.shutdownGracefully()
    guard let lines = outcome else {
        print("FAIL the cached names were not answered by the upstream on port \(upstreamPort)")
        return 1
    }
    print("reply benchmark: \(nameCount) names listed and blocked, \(replies) replies per row, one event loop")
    for line in lines { print(line) }
    return lines.contains { $0.hasPrefix("FAIL") } ? 1 : 0
}

private func name(_ names: PackedNames, _ index: Int) -> String {
    String(decoding: names.bytes[names.range(index)], as: UTF8.self)
}

private enum ReplyKind { case builtReply, scratchReply, other }

private func replyKind(_ resolution: Resolution) -> ReplyKind {
    switch resolution {
    case .builtReply: .builtReply
    case .scratchReply: .scratchReply
    default: .other
    }
}
