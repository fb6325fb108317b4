import ArgumentParser

/// `scrolloff`: the unprivileged CLI. It only talks to the helper; it never writes state itself (SPEC §11).
struct ScrollOff: ParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "scrolloff",
        abstract: "Block doomscrolling at the DNS layer and earn your time back.",
        version: "0.1.0"
    )
}

ScrollOff.main()
