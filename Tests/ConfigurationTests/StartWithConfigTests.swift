import Foundation
import TestSupport
import Testing

/// `scrolloff-dns start --config FILE` as the real binary: the file's settings are in force, and a
/// flag given beats the file (flags > file > defaults).
@Suite("start reads the configuration file")
struct StartWithConfigTests {
    /// Starts the helper, blocks `blocked.test` with `scrolloff block` (the path people use),
    /// waits for its UDP port, asks `dig` about `name`, and stops it.
    static func status(of name: String, config: String, flags: [String], scratch: Scratch) throws -> String {
        let socket = scratch.path + "/c-\(UUID().uuidString).sock"
        let process = Process()
        process.executableURL = URL(fileURLWithPath: CheckConfigTests.binary)
        process.arguments = HelperLaunch(
            executable: CheckConfigTests.binary, stateDirectory: scratch.path + "/state-\(UUID().uuidString)", controlSocket: socket,
            config: config, extra: flags
        ).arguments
        let out = Pipe()
        process.standardOutput = out
        process.standardError = FileHandle.nullDevice
        try process.run()
        defer {
            process.terminate()
            process.waitUntilExit()
        }
        // The helper prints `listening udp 127.0.0.1:PORT` before serving (SPEC §13).
        var text = ""
        let deadline = Date().addingTimeInterval(20)
        while !text.contains("listening udp"), Date() < deadline {
            let chunk = out.fileHandleForReading.availableData
            if chunk.isEmpty { break }
            text += String(decoding: chunk, as: UTF8.self)
        }
        let line = try #require(text.split(separator: "\n").first { $0.hasPrefix("listening udp 127.0.0.1:") })
        let port = try #require(line.split(separator: ":").last.map(String.init))
        let block = Process()
        block.executableURL = URL(fileURLWithPath: CheckConfigTests.binary).deletingLastPathComponent().appendingPathComponent("scrolloff")
        block.arguments = ["block", "blocked.test", "--socket", socket]
        block.standardOutput = FileHandle.nullDevice
        try block.run()
        block.waitUntilExit()
        #expect(block.terminationStatus == 0, "scrolloff block blocked.test")
        let dig = Process()
        dig.executableURL = URL(fileURLWithPath: "/usr/bin/dig")
        dig.arguments = ["@127.0.0.1", "-p", port, "+time=2", "+tries=1", name, "A"]
        let answer = Pipe()
        dig.standardOutput = answer
        try dig.run()
        let reply = String(decoding: answer.fileHandleForReading.readDataToEndOfFile(), as: UTF8.self)
        dig.waitUntilExit()
        let header = try #require(reply.split(separator: "\n").first { $0.contains("status: ") })
        return String(header.split(separator: "status: ").last?.split(separator: ",").first ?? "")
    }

    @Test func blocking_mode_of_the_file_is_in_force() throws {
        let scratch = try Scratch()
        let config = try scratch.file("s.toml", "[dns]\nupstreams = [\"127.0.0.1:9\"]\nblocking_mode = \"nxdomain\"\n")
        #expect(try Self.status(of: "blocked.test", config: config, flags: [], scratch: scratch) == "NXDOMAIN")
    }

    @Test func blocking_mode_flag_beats_the_file() throws {
        let scratch = try Scratch()
        let config = try scratch.file("s.toml", "[dns]\nupstreams = [\"127.0.0.1:9\"]\nblocking_mode = \"nxdomain\"\n")
        #expect(try Self.status(of: "blocked.test", config: config, flags: ["--blocking-mode", "refused"], scratch: scratch) == "REFUSED")
    }

    @Test func bad_file_stops_start_with_the_key_and_line() throws {
        let scratch = try Scratch()
        let config = try scratch.file("bad.toml", "[dns]\n\nblocking_mode = \"drop\"\n")
        let process = Process()
        process.executableURL = URL(fileURLWithPath: CheckConfigTests.binary)
        process.arguments = HelperLaunch(executable: CheckConfigTests.binary, stateDirectory: scratch.path + "/state", config: config).arguments
        let err = Pipe()
        process.standardError = err
        process.standardOutput = FileHandle.nullDevice
        try process.run()
        let stderr = String(decoding: err.fileHandleForReading.readDataToEndOfFile(), as: UTF8.self)
        process.waitUntilExit()
        #expect(process.terminationStatus != 0)
        #expect(stderr.contains("\(config):3: dns.blocking_mode is \"drop\"; allowed: null, nxdomain, refused"), "\(stderr)")
    }
}
