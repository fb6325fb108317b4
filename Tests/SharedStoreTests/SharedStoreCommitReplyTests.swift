@testable import Engine
import Foundation
#if canImport(Glibc)
import Glibc
#endif
import PostgresStore
import ScrollOffCore
import Store
import Synchronization
import TestSupport
import Testing

/// A commit whose reply is lost: the connection drops after COMMIT reached the server. The server
/// committed, so the helper must not say "nothing was changed"; it says the change may or may
/// not have been applied and how to find out.
@Suite(.serialized) struct SharedStoreCommitReplyTests {
    @Test func a_commit_whose_reply_is_lost_is_reported_as_maybe_applied_never_as_nothing_changed() async throws {
        let db = try TestPostgres()
        defer { db.stop() }
        let proxy = try CommitDroppingProxy(server: db.socketFolder + "/.s.PGSQL.\(db.port)")
        defer { proxy.close() }
        let location = try PostgresLocation(parsing: "postgresql://scrolloff@/postgres?host=\(proxy.folder)&port=\(db.port)")
        let store = try PostgresStateStore(location: location, node: "a", statementTimeout: .seconds(2))
        _ = try store.load()
        let anchor = ClockAnchor(trusted: Instant(millisecondsSince1970: 1_795_003_200_000), bootNanoseconds: 1, bootID: "x")

        proxy.armed.withLock { $0 = true }
        do {
            try store.commit(StateChange([.saveProfile(ProfileSettings(name: "kids", timeZoneID: "UTC"))]), anchor: anchor)
            Issue.record("the commit's reply came back through a proxy that drops it")
        } catch {
            let text = "\(error)"
            #expect(text.contains("may or may not have been applied") && text.contains("scrolloff status"), "\(text)")
            #expect(!text.contains("nothing was changed") && !text.contains("nothing was saved"), "\(text)")
            // The engine's words for it too.
            let engineText = EngineError(error).description
            #expect(engineText.contains("may or may not") && !engineText.contains("nothing was changed"), "\(engineText)")
        }
        #expect(proxy.dropped.withLock { $0 } == 1, "the proxy dropped the connection after COMMIT: \(proxy.seen.withLock { $0 })")
        // It was applied: the server committed before the connection went.
        #expect(await SharedFixture.eventually(seconds: 5) { (try? db.query("SELECT count(*) FROM profiles WHERE name = 'kids'")) == "1" })
    }
}

/// A Unix-socket proxy in front of PostgreSQL's socket that, once `armed`, forwards the client's
/// message carrying COMMIT and then closes both sides before the server's reply can come back.
final class CommitDroppingProxy: @unchecked Sendable {
    let folder: String
    let armed = Mutex(false)
    let dropped = Mutex(0)
    private let cut = Mutex(false)
    /// Connections accepted and client messages seen while armed, for the failure message.
    let seen = Mutex((connections: 0, armedChunks: [String]()))
    private let listener: Int32
    private let server: String
    private let open = Mutex(true)

    init(server: String) throws {
        self.server = server
        folder = FileManager.default.temporaryDirectory.appendingPathComponent("scrolloff-pg-proxy-\(UUID().uuidString.prefix(8))").path
        try FileManager.default.createDirectory(atPath: folder, withIntermediateDirectories: true)
        let port = server.split(separator: ".").last.map(String.init) ?? "5432"
        listener = try Self.unixSocket(path: folder + "/.s.PGSQL.\(port)", listening: true)
        Thread.detachNewThread { [self] in acceptLoop() }
    }

    func close() {
        open.withLock { $0 = false }
        shutdown(listener, Int32(SHUT_RDWR))
        Glibc.close(listener)
        try? FileManager.default.removeItem(atPath: folder)
    }

    private func acceptLoop() {
        while open.withLock({ $0 }) {
            let client = accept(listener, nil, nil)
            guard client >= 0 else { return }
            guard let upstream = try? Self.unixSocket(path: server, listening: false) else { Glibc.close(client); continue }
            seen.withLock { $0.connections += 1 }
            Thread.detachNewThread { [self] in pump(from: client, to: upstream, watching: true) }
            Thread.detachNewThread { [self] in pump(from: upstream, to: client, watching: false) }
        }
    }

    private func pump(from source: Int32, to target: Int32, watching: Bool) {
        var buffer = [UInt8](repeating: 0, count: 65_536)
        while true {
            let n = buffer.withUnsafeMutableBytes { read(source, $0.baseAddress, $0.count) }
            guard n > 0 else { break }
            let chunk = Array(buffer[0..<n])
            if watching, armed.withLock({ $0 }) {
                seen.withLock { $0.armedChunks.append(String(decoding: chunk.map { $0 < 32 || $0 > 126 ? 46 : $0 }, as: UTF8.self)) }
            }
            let isCommit = watching && armed.withLock { $0 } && Self.contains(chunk, Array("COMMIT".utf8))
            // From COMMIT on, nothing the server says reaches the client.
            if isCommit { cut.withLock { $0 = true } }
            if !watching, cut.withLock({ $0 }) { continue }
            _ = chunk.withUnsafeBytes { write(target, $0.baseAddress, n) }
            if isCommit {
                // Let the server read and run it, then drop both sides; its reply was never passed on.
                usleep(300_000)
                dropped.withLock { $0 += 1 }
                armed.withLock { $0 = false }
                shutdown(source, Int32(SHUT_RDWR))
                shutdown(target, Int32(SHUT_RDWR))
                break
            }
        }
        shutdown(target, Int32(SHUT_WR))
    }

    static func contains(_ haystack: [UInt8], _ needle: [UInt8]) -> Bool {
        guard haystack.count >= needle.count else { return false }
        for i in 0...(haystack.count - needle.count) where haystack[i..<(i + needle.count)].elementsEqual(needle) { return true }
        return false
    }

    static func unixSocket(path: String, listening: Bool) throws -> Int32 {
        let fd = socket(AF_UNIX, Int32(SOCK_STREAM.rawValue), 0)
        var address = sockaddr_un()
        address.sun_family = sa_family_t(AF_UNIX)
        withUnsafeMutableBytes(of: &address.sun_path) { raw in
            for (i, byte) in path.utf8.prefix(raw.count - 1).enumerated() { raw[i] = byte }
        }
        let length = socklen_t(MemoryLayout<sockaddr_un>.size)
        let result = withUnsafePointer(to: &address) { pointer in
            pointer.withMemoryRebound(to: sockaddr.self, capacity: 1) { listening ? bind(fd, $0, length) : connect(fd, $0, length) }
        }
        guard result == 0, !listening || listen(fd, 8) == 0 else {
            Glibc.close(fd)
            throw TestPostgres.Failed(description: "proxy socket \(path): errno \(errno)")
        }
        return fd
    }
}
