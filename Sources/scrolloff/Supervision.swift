import ArgumentParser
import ControlAPI
import ScrollOffCore

/// An owner's tools over someone else's devices: pause and resume a profile (SPEC §5a) and its
/// daily allowances (SPEC §4a).
enum SupervisionVerbs: VerbFeature {
    static var commands: [any ParsableCommand.Type] { [PauseCommand.self, ResumeCommand.self, AllowanceCommand.self] }
}

/// `scrolloff pause --profile kid 45m` or `--until 19:30`, with `--reason`.
struct PauseCommand: ParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "pause",
        abstract: "Pause a profile now (owners): every name but the allow lists is blocked on its devices until the end."
    )

    @OptionGroup var options: GlobalOptions

    @Argument(help: ArgumentHelp("How long: 45m, 1h30, 2 hours.", valueName: "duration"), transform: DurationArgument.reading)
    var duration: DurationArgument?

    @Option(name: .long, help: ArgumentHelp("Until a time of day in the profile's zone: 19:30, 7:30 pm.", valueName: "time"))
    var until: String?

    @Option(name: .long, help: "Why, in a few words (\"dinner\"); shown in status and events.")
    var reason: String?

    func validate() throws {
        switch (duration, until) {
        case (nil, nil): throw ValidationError("Say how long, such as `scrolloff pause --profile kid 45m`, or until when with --until 19:30.")
        case (_?, _?): throw ValidationError("Give a length (45m) or --until 19:30, not both.")
        default: break
        }
        if let until, (try? LocalTime.parse(until)) == nil {
            throw ValidationError("`\(until)` is not a time of day: write 19:30, 7:30 or 7:30 pm.")
        }
    }

    func run() throws {
        let seconds = try duration.map { try PauseSeconds($0.seconds, field: "the pause length") }
        let answer = try options.call(ControlEndpoints.pause, PauseRequest(seconds: seconds, until: until, reason: reason))
        options.emit(answer) {
            let end = answer.pausedUntil.map { " until \(TimeWords.until($0, now: answer.now))" } ?? ""
            print("\(answer.profile) is paused\(end): every name but the allow lists is blocked on its devices."
                + " `scrolloff resume --profile \(answer.profile)` lifts it early.")
        }
    }
}

/// `scrolloff resume --profile kid`: lifts the pause now (owners; no cooldown).
struct ResumeCommand: ParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "resume",
        abstract: "Lift a profile's pause now (owners)."
    )

    @OptionGroup var options: GlobalOptions

    func run() throws {
        let answer = try options.call(ControlEndpoints.resume)
        options.emit(answer) { print(answer.message) }
    }
}

/// `scrolloff allowance set|list|clear` (SPEC §4a).
struct AllowanceCommand: ParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "allowance",
        abstract: "Daily time limits: time a profile may spend on some entries each day without earning it (owners set them).",
        subcommands: [AllowanceSet.self, AllowanceList.self, AllowanceClear.self],
        defaultSubcommand: AllowanceList.self
    )

    static func show(_ answer: AllowancesReport) {
        if !answer.message.isEmpty { print(answer.message) }
        for a in answer.allowances {
            let left = a.allowanceLeftSeconds.map { "\(TimeWords.span(seconds: $0)) left today" } ?? "none today"
            let lock = a.lockedUntil.map { "; raising it is locked until \(TimeWords.until($0, now: answer.now))" } ?? ""
            print("  \(a.words): \(left)\(lock)")
        }
    }
}

struct AllowanceSet: ParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "set",
        abstract: "Set a daily allowance: `allowance set 1h --entries youtube --days weekdays --profile kid`."
    )

    @OptionGroup var options: GlobalOptions

    @Argument(help: ArgumentHelp("Time a day: 45m, 1h, 1h30.", valueName: "duration"), transform: DurationArgument.reading)
    var duration: DurationArgument

    @Option(name: .long, help: "The entries it is for, such as youtube,tiktok (all entries when left out).")
    var entries: String?

    @Option(name: .long, help: "daily (the default), weekdays, weekends or mon,tue,…")
    var days: String?

    func run() throws {
        let body = AllowanceRequest(seconds: try AllowanceSeconds(duration.seconds, field: "the daily allowance"), entries: splitList(entries), days: days)
        let answer = try options.call(ControlEndpoints.setAllowance, body)
        options.emit(answer) { AllowanceCommand.show(answer) }
    }
}

struct AllowanceList: ParsableCommand {
    static let configuration = CommandConfiguration(commandName: "list", abstract: "The profile's daily allowances and what is left today.")

    @OptionGroup var options: GlobalOptions

    func run() throws {
        let answer = try options.call(ControlEndpoints.allowances)
        options.emit(answer) { AllowanceCommand.show(answer) }
    }
}

struct AllowanceClear: ParsableCommand {
    static let configuration = CommandConfiguration(commandName: "clear", abstract: "Remove a daily allowance (on some days with --days).")

    @OptionGroup var options: GlobalOptions

    @Option(name: .long, help: "The entries of the allowance, as it was set (all entries when left out).")
    var entries: String?

    @Option(name: .long, help: "Only on these days: weekdays, weekends or mon,tue,… (every day when left out).")
    var days: String?

    func run() throws {
        let answer = try options.call(ControlEndpoints.clearAllowance, AllowanceClearRequest(entries: splitList(entries), days: days))
        options.emit(answer) { AllowanceCommand.show(answer) }
    }
}
