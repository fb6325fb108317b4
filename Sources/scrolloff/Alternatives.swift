import ArgumentParser

/// `scrolloff alternatives`: things to do instead, shown at a bypass (SPEC §8).
struct Alternatives: ParsableCommand {
    static let configuration = CommandConfiguration(
        abstract: "Your short list of things to do instead, shown at a bypass.",
        subcommands: [AlternativesAdd.self, AlternativesList.self]
    )
}
