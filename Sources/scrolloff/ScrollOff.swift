import ArgumentParser
#if canImport(Glibc)
import Glibc
#endif

/// `scrolloff`: the unprivileged CLI. It only talks to the helper; it never writes state itself (SPEC §11).
struct ScrollOff: ParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "scrolloff",
        abstract: "Block doomscrolling at the DNS layer and earn your time back.",
        version: "0.1.0",
        subcommands: features.flatMap { $0.commands }
    )

    /// The features in the order `scrolloff --help` lists their verbs. Each feature's file holds its
    /// verbs and lists them, so a new verb is written and registered in one file; a new feature
    /// adds its list here.
    static var features: [any VerbFeature.Type] {
        [StatusVerbs.self, BlockingVerbs.self, CreditVerbs.self, HouseholdVerbs.self, SupervisionVerbs.self, PlansVerbs.self, InsightVerbs.self,
         ListsVerbs.self, ProfileVerbs.self, DoctorVerbs.self, LiveVerbs.self]
    }
}

/// One feature's verbs (`CreditVerbs`: wallet, use, stop, peek, token), declared in the file that
/// holds them. ArgumentParser finds a command only in its parent's `subcommands`; this keeps that
/// list beside the commands instead of in one hand-kept list here.
protocol VerbFeature {
    /// The feature's top-level verbs, in the order help lists them; a verb's own sub-verbs stay in
    /// its `subcommands`.
    static var commands: [any ParsableCommand.Type] { get }
}

/// The CLI's entry. The `scrolloff` program in .build (Sources/scrolloff-cli) calls it, and so does
/// `scrolloff-dns` when it is run under the name `scrolloff`: the installed `scrolloff` is a link
/// to `scrolloff-dns`, one program for both commands (docs/benchmarks.md, "Installed size").
public enum ScrollOffCLI {
    /// Whether a program started as `path` (its `argv[0]`) is the CLI: its last component is
    /// `scrolloff`, as typed (`scrolloff`), found on PATH (`/usr/bin/scrolloff`) or through a link.
    public static func isCLI(programPath path: String?) -> Bool {
        guard let path else { return false }
        return path.split(separator: "/", omittingEmptySubsequences: true).last == "scrolloff"
    }

    // Parsed by hand rather than with `ScrollOff.main()` so usage errors exit with 2 as SPEC §13
    // says (ArgumentParser's own code for them is 64, EX_USAGE).
    public static func main() -> Never {
        do {
            let arguments: [String]
            do {
                arguments = try ForgivingArguments.normalize(Array(CommandLine.arguments.dropFirst()))
            } catch {
                Terminal.printError("Error: \(error.message)")
                Glibc.exit(CLIExit.usage)
            }
            var command = try ScrollOff.parseAsRoot(arguments)
            try command.run()
        } catch let exit as ExitCode {
            Glibc.exit(exit.rawValue)
        } catch {
            let code = ScrollOff.exitCode(for: error)
            // Help and --version are "errors" with code 0; let ArgumentParser print them as usual.
            if code == .success { ScrollOff.exit(withError: error) }
            Terminal.printError(ScrollOff.fullMessage(for: error))
            Glibc.exit(CLIExit.usage)
        }
        Glibc.exit(0)
    }
}
