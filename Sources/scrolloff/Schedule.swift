import ArgumentParser

/// `scrolloff schedule`: recurring block windows and curfews (SPEC §2).
struct Schedule: ParsableCommand {
    static let configuration = CommandConfiguration(
        abstract: "Add, show and remove recurring block windows and curfews.",
        subcommands: [ScheduleAdd.self, ScheduleList.self, ScheduleRemove.self]
    )
}
