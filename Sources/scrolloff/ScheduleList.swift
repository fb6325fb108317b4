import ArgumentParser
import ControlAPI

/// `scrolloff schedule list`.
struct ScheduleList: ParsableCommand {
    static let configuration = CommandConfiguration(commandName: "list", abstract: "Show your schedules.")

    @OptionGroup var options: GlobalOptions

    func run() throws {
        let answer = try options.call(ControlEndpoints.schedules)
        options.emit(answer) {
            guard !answer.schedules.isEmpty else {
                print("No schedules yet. `scrolloff schedule add evenings --from 21:00 --to 07:00 --entries social` adds one.")
                return
            }
            let now = answer.now ?? TimeWords.now()
            for s in answer.schedules {
                let lock = s.lockedUntil.map { " · locked until \(TimeWords.until($0, now: now))" } ?? ""
                let reason = s.reason.map { " · “\($0)”" } ?? ""
                print("\(Terminal.bold(s.name)): \(ScheduleWords.line(s))\(lock)\(reason)")
            }
        }
    }
}
