import ArgumentParser

/// `scrolloff lists`: block lists downloaded from URLs (SPEC §13).
struct Lists: ParsableCommand {
    static let configuration = CommandConfiguration(
        abstract: "Add, show, refresh and remove block lists downloaded from URLs.",
        subcommands: [ListsAdd.self, ListsList.self, ListsUpdate.self, ListsRemove.self]
    )

    /// Downloads of large lists may take minutes: 10 min per attempt, 3 attempts, waits between.
    static let downloadTimeoutSeconds: Double = 35 * 60
}
