import Foundation

/// The python list server of `Resources/list_server.py`, one per test, on a free loopback port.
/// Each request it receives is logged with its headers so tests can assert what was sent.
final class ListServer: Sendable {
    let port: Int
    /// A loopback port that accepts no connection: its accept queue is full.
    let blackHolePort: Int
    let logPath: String
    private let process: Process

    struct ServerFailedToStart: Error, CustomStringConvertible {
        var description: String
    }

    struct LoggedRequest: Decodable, Sendable {
        var path: String
        var headers: [String: String]
    }

    private init(port: Int, blackHolePort: Int, logPath: String, process: Process) {
        self.port = port
        self.blackHolePort = blackHolePort
        self.logPath = logPath
        self.process = process
    }

    static func start() throws -> ListServer {
        guard let script = Bundle.module.path(forResource: "list_server", ofType: "py", inDirectory: "Resources") else {
            throw ServerFailedToStart(description: "Resources/list_server.py is missing from the test bundle")
        }
        let logPath = Scratch.uniquePath("server-log") + ".jsonl"
        _ = FileManager.default.createFile(atPath: logPath, contents: nil)
        let process = Process()
        process.executableURL = URL(fileURLWithPath: "/usr/bin/python3")
        process.arguments = [script, logPath]
        let stdout = Pipe()
        process.standardOutput = stdout
        try process.run()
        // The server prints its port once bound; read up to the newline.
        var line: [UInt8] = []
        let handle = stdout.fileHandleForReading
        while line.last != UInt8(ascii: "\n") {
            guard let byte = try handle.read(upToCount: 1), let first = byte.first else {
                process.terminate()
                throw ServerFailedToStart(description: "list_server.py exited before printing its port")
            }
            line.append(first)
        }
        let ports = String(decoding: line, as: UTF8.self).split(separator: " ").compactMap {
            Int($0.trimmingCharacters(in: .whitespacesAndNewlines))
        }
        guard ports.count == 2 else {
            process.terminate()
            throw ServerFailedToStart(description: "list_server.py printed no ports")
        }
        return ListServer(port: ports[0], blackHolePort: ports[1], logPath: logPath, process: process)
    }

    func url(_ path: String) -> String { "http://127.0.0.1:\(port)\(path)" }

    /// Every request the server has received so far, oldest first.
    func requests() throws -> [LoggedRequest] {
        let text = try String(contentsOfFile: logPath, encoding: .utf8)
        return try text.split(separator: "\n").map { line in
            try JSONDecoder().decode(LoggedRequest.self, from: Data(line.utf8))
        }
    }

    func requests(to path: String) throws -> [LoggedRequest] {
        try requests().filter { $0.path == path }
    }

    func stop() {
        // SIGKILL: the server never needs to clean up, and a stalled handler must not delay it.
        kill(process.processIdentifier, SIGKILL)
        process.waitUntilExit()
        try? FileManager.default.removeItem(atPath: logPath)
    }
}

/// Unique scratch paths under the system temporary folder.
enum Scratch {
    static func uniquePath(_ stem: String) -> String {
        NSTemporaryDirectory() + "/listfetch-\(stem)-\(UUID().uuidString)"
    }

    /// A fresh empty folder, removed by the caller with `remove`.
    static func directory(_ stem: String) throws -> String {
        let path = uniquePath(stem)
        try FileManager.default.createDirectory(atPath: path, withIntermediateDirectories: true)
        return path
    }

    static func remove(_ path: String) {
        try? FileManager.default.removeItem(atPath: path)
    }

    static func bytes(_ path: String) -> [UInt8]? {
        FileManager.default.contents(atPath: path).map { [UInt8]($0) }
    }
}
