import ArgumentParser

/// `scrolloff profile`: rules per group of clients (SPEC §9).
struct Profile: ParsableCommand {
    static let configuration = CommandConfiguration(
        abstract: "Profiles: separate rules and wallets for groups of devices on the network.",
        subcommands: [ProfileAdd.self, ProfileList.self, ProfileRemove.self]
    )
}
