import ControlAPI
import ControlServer
import Engine
import Foundation
import Helper
import Logging
import ScrollOffCore
import ServiceKit
import ServiceLifecycle
import Testing

extension ControlEndToEnd {
/// The control pieces run the way HelperMain runs them: as services of one ServiceGroup.
@Suite
struct HelperServicesTests {
    @Test func control_services_serve_in_a_service_group_and_clean_up_on_shutdown() async throws {
        let directory = try makeTemporaryDirectory()
        defer { try? FileManager.default.removeItem(atPath: directory) }
        var paths = RuntimePaths.defaults(isRoot: false, environment: ["HOME": directory])
        paths.stateDirectory = directory + "/state"
        paths.controlSocket = directory + "/run/ctl.sock"
        var logger = Logger(label: "test")
        logger.logLevel = .critical
        let engine = try await HelperEngine.start(
            configuration: EngineConfiguration(stateDirectory: paths.stateDirectory, catalog: try EngineServer.catalog(),
                                               buildDate: Instant(secondsSince1970: 1_767_225_600), defaultTimeZoneID: "UTC"),
            timeSource: SystemTimeSource(), logger: logger
        )
        let control = await HelperControl(paths: paths, version: "9.9.9", engine: engine, logger: logger)
        let group = ServiceGroup(configuration: .init(services: control.services.map { .init(service: $0) }, logger: logger))
        let running = Task { try await group.run() }

        #expect(await eventually { FileManager.default.fileExists(atPath: paths.controlSocket) })
        var info = stat()
        #expect(stat(directory + "/run", &info) == 0)
        #expect(info.st_mode & 0o777 == 0o755, "the socket's folder is created 0755")
        let health = try await cli(["lists", "list", "--json"], socket: paths.controlSocket)
        #expect(health.status == 0, "\(health)")

        await group.triggerGracefulShutdown()
        try await running.value
        #expect(!FileManager.default.fileExists(atPath: paths.controlSocket), "the socket is removed on shutdown")
        let after = try await cli(["lists", "list"], socket: paths.controlSocket)
        #expect(after.status == 3)
    }

    @Test func idle_connection_is_closed_but_a_request_on_it_is_answered_first() async throws {
        let server = try await RunningServer(idleTimeout: .milliseconds(300))
        defer { Task { await server.stop() } }
        // Nothing sent: the server hangs up after the idle timeout (rawExchange reads until close).
        let started = ContinuousClock.now
        let silent = try await rawExchange(server.socketPath, [])
        #expect(silent.isEmpty)
        #expect(ContinuousClock.now - started < .seconds(4), "closed by the idle timeout, not the 5 s read timeout")
        // A keep-alive request is answered, then the idle connection is closed.
        let answered = try await rawExchange(server.socketPath, Array("GET /v1/health HTTP/1.1\r\nHost: x\r\n\r\n".utf8))
        #expect(answered.hasPrefix("HTTP/1.1 200"))
    }

    /// Sending bytes is not sending a request, and a client that takes no answers is not waiting
    /// for one: each of these held its connection for good (a member of group scrolloff could keep
    /// its 8 for ever, and 8 such users all 64), however short the idle timeout.
    @Test func a_client_that_dribbles_a_request_stops_after_its_head_or_reads_no_answers_is_closed_after_the_idle_timeout() async throws {
        let server = try await RunningServer(idleTimeout: .milliseconds(300))
        defer { Task { await server.stop() } }
        let script = """
            import errno, socket, sys, time
            def connect():
                s = socket.socket(socket.AF_UNIX, socket.SOCK_STREAM)
                s.connect(sys.argv[1])
                return s
            dribble = connect()                 # a whole head never comes: a header byte each 100 ms
            dribble.sendall(b"GET /v1/health HTTP/1.1\\r\\nX-Slow: ")
            stalled = connect()                 # a whole head, then not the body it announces
            stalled.sendall(b"POST /v1/health HTTP/1.1\\r\\nHost: x\\r\\nContent-Length: 100\\r\\n\\r\\n")
            deaf = connect()                    # pipelines requests until it cannot, reads no answer
            deaf.setblocking(False)
            try:
                while True:
                    deaf.send(b"GET /v1/health HTTP/1.1\\r\\nHost: x\\r\\n\\r\\n" * 64)
            except BlockingIOError:
                pass
            def closed(s):
                try:
                    s.send(b"a", socket.MSG_DONTWAIT)
                    return False
                except BlockingIOError:
                    return False
                except OSError as e:
                    return e.errno in (errno.EPIPE, errno.ECONNRESET)
            names = {"dribble": dribble, "stalled": stalled, "deaf": deaf}
            end = time.time() + 2.5             # 8 idle timeouts
            while time.time() < end:
                time.sleep(0.1)
                closed(dribble)                 # sends its next byte
            print(" ".join("%s=%s" % (n, "closed" if closed(s) else "open") for n, s in names.items()))
            """
        let path = NSTemporaryDirectory() + "/control-stall-\(UUID().uuidString).py"
        try script.write(toFile: path, atomically: true, encoding: .utf8)
        defer { try? FileManager.default.removeItem(atPath: path) }
        let result = try await run("/usr/bin/python3", [path, server.socketPath])
        #expect(result.stdout == "dribble=closed stalled=closed deaf=closed\n", "\(result)")
        // A well-behaved client is still served.
        let answered = try await rawExchange(server.socketPath, Array("GET /v1/health HTTP/1.1\r\nHost: x\r\n\r\n".utf8))
        #expect(answered.hasPrefix("HTTP/1.1 200"))
    }
}
}
