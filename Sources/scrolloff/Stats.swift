import ArgumentParser
import ControlAPI

/// `scrolloff stats [--day|--week|--month]` (SPEC §7).
struct Stats: ParsableCommand {
    static let configuration = CommandConfiguration(abstract: "Your numbers: urges resisted, time protected, credit earned and spent.")

    @OptionGroup var options: GlobalOptions

    @Flag(exclusivity: .exclusive, help: "The period (default: today).")
    var period: StatsPeriod = .day

    func run() throws {
        let stats = try options.call(ControlEndpoints.stats, query: [(ControlQuery.period, period.rawValue)])
        options.emit(stats) {
            let range = stats.firstDay == stats.lastDay ? stats.firstDay : "\(stats.firstDay) to \(stats.lastDay)"
            print(Terminal.bold(range))
            print("\(stats.urgesResisted) of \(Plural.count(stats.urges, "urge")) resisted · \(TimeWords.span(seconds: stats.protectedSeconds)) protected")
            print("Earned \(TimeWords.balance(seconds: stats.earnedSeconds)) · spent \(TimeWords.balance(seconds: stats.spentSeconds)) · "
                + "\(Plural.count(stats.peeks, "peek")) · \(Plural.count(stats.tokens, "token"))")
            print("Streak: \(stats.streakDays) \(stats.streakDays == 1 ? "day" : "days")")
            for note in stats.notes { print(Terminal.dim(note)) }
        }
    }
}

extension StatsPeriod: EnumerableFlag {}
