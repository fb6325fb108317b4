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
    /// (ECONNREFUSED, exit 3).
    func waitForControlSocket() {
        let deadline = Date().addingTimeInterval(15)
        while !stderr.contains("control socket listening"), isRunning, Date() < deadline { usleep(20_000) }
    }
}
