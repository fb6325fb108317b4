import Foundation
import TestSupport

/// Starting a ``HelperLaunch`` (the one place that spells `scrolloff-dns start`'s command line)
/// as this target's processes run, and reading what the started helper prints.
extension HelperLaunch {
    /// Starts the command as a child of the test, its output in the scratch folder under `label`.
    func spawn(scratch: Scratch, label: String) throws -> Child {
        let command = self.command
        return try Child(command[0], Array(command.dropFirst()), scratch: scratch, label: label)
    }

    /// Runs the command to its end (a start that must fail): its exit code and output.
    func outcome() throws -> Outcome {
        let command = self.command
        return try runWithStatus(command[0], Array(command.dropFirst()))
    }
}

extension Child {
    /// The port of the helper's `listening TRANSPORT HOST:PORT` line, once it has printed it.
    func listeningPort(_ transport: String = "udp", on host: String = "127.0.0.1", seconds: Double = 15) throws -> Int {
        let line = try waitForLine(seconds: seconds) { $0.hasPrefix("listening \(transport) \(host):") }
        guard let port = line.split(separator: ":").last.flatMap({ Int($0) }) else { throw HarnessError("unexpected listening line: \(line)") }
        return port
    }

    /// Waits (at most 15 s) until the helper says its control socket listens. The socket is put in
    /// place by its own service, not before DNS listens: after a restart over a SIGKILLed helper's
    /// stale socket file, a CLI call reaches the new helper rather than the dead one's file
    /// (ECONNREFUSED, exit 3); and a CLI call made as soon as DNS listens finds no socket yet
    /// (exit 3) on a loaded machine.
    func waitForControlSocket(seconds: Double = 15) throws {
        let deadline = Date().addingTimeInterval(seconds)
        while !stderr.contains("control socket listening") {
            guard isRunning else { throw HarnessError("the helper exited before its control socket listened: \(stderr.suffix(2_000))") }
            guard Date() < deadline else { throw HarnessError("no control socket after \(seconds) s: \(stderr.suffix(2_000))") }
            usleep(20_000)
        }
    }
}
