import ArgumentParser
import ControlAPI
import ControlTransport
import Foundation
import ScrollOffCore

/// Options every command takes (SPEC §13). Each verb declares them (`@OptionGroup`), so
/// `ForgivingArguments` moves them behind the verb when they are typed before it; it knows them by
/// the names below, the same as the declarations' (CLITests runs each before a verb).
struct GlobalOptions: ParsableArguments {
    /// The global options that take a value, and the flags, as typed.
    static let valueNames = ["--socket", "--profile"]
    static let flagNames = ["--json"]

    @Option(name: .customLong("socket"), help: ArgumentHelp("The helper's control socket (default: $SCROLLOFF_SOCKET, else the helper's default).", valueName: "PATH"))
    var socket: String?

    @Option(name: .customLong("profile"), help: ArgumentHelp("The profile to act on (default: the default profile).", valueName: "NAME"))
    var profile: String?

    @Flag(name: .customLong("json"), help: "Print the helper's answer as JSON.")
    var json = false

    /// The socket to use: the flag, then `SCROLLOFF_SOCKET`, then where the helper puts it.
    var socketPath: String {
        if let socket, !socket.isEmpty { return socket }
        return DefaultLocations.cliControlSocket(
            environment: ProcessInfo.processInfo.environment, isRoot: geteuid() == 0,
            fileExists: { FileManager.default.fileExists(atPath: $0) }
        )
    }

    func client(timeoutSeconds: Double = 15) -> ControlClient {
        ControlClient(socketPath: socketPath, timeoutSeconds: timeoutSeconds, profile: profile)
    }

    func validate() throws {
        if let socket, socket.isEmpty { throw ValidationError("--socket needs a path.") }
        if let profile, profile.isEmpty { throw ValidationError("--profile needs a name.") }
    }
}

/// Exit codes of SPEC §13.
enum CLIExit {
    static let done: Int32 = 0
    static let refused: Int32 = 1
    static let usage: Int32 = 2
    static let unreachable: Int32 = 3
}

extension GlobalOptions {
    /// Runs one exchange with the helper. A failure is printed (as JSON with `--json`) and ends
    /// the command with the exit code SPEC §13 gives it.
    func talk<T>(_ body: () throws(ControlClientError) -> T) throws -> T {
        do {
            return try body()
        } catch {
            report(error)
            throw ExitCode(error.exitCode)
        }
    }

    func report(_ error: ControlClientError) {
        if json {
            let wire: ControlError
            switch error {
            case .refused(_, let refusal): wire = refusal
            case .helperUnreachable, .permissionDenied, .timedOut, .socketPathInvalid, .io, .badAnswer:
                wire = ControlError(code: "helper_unreachable", message: error.description)
            case .untrustedServer:
                wire = ControlError(code: "untrusted_socket", message: error.description)
            }
            Terminal.printJSON(ControlErrorEnvelope(error: wire))
        } else if case .refused(_, let refusal) = error, refusal.rule != nil {
            for line in RefusalWords.lines(refusal, now: refusal.now.map(Instant.init(date:)) ?? TimeWords.now()) { Terminal.printError(line) }
        } else {
            Terminal.printError(error.description)
        }
    }
}
