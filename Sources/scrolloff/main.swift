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
        subcommands: [
            Status.self, Services.self, Block.self, Unblock.self, Schedule.self, Focus.self,
            Wallet.self, Use.self, Stop.self, Peek.self, Token.self, Adjust.self, Ask.self, Requests.self,
            Plan.self, Alternatives.self, Stats.self, Digest.self, Events.self, Export.self,
            Lists.self, Profile.self, Doctor.self,
        ]
    )
}

// Parsed by hand rather than with `ScrollOff.main()` so usage errors exit with 2 as SPEC §13
// says (ArgumentParser's own code for them is 64, EX_USAGE).
do {
    var command = try ScrollOff.parseAsRoot()
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
