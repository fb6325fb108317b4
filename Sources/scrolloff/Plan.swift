import ArgumentParser

/// `scrolloff plan`: "when X, I will Y" plans, shown at every bypass (SPEC §8).
struct Plan: ParsableCommand {
    static let configuration = CommandConfiguration(
        abstract: "Plans for the moments you reach for your phone: “when I feel bored, I will take a short walk”.",
        subcommands: [PlanAdd.self, PlanList.self, PlanArchive.self]
    )
}
