import ArgumentParser
import ControlAPI

/// `scrolloff plan add --when TEXT --then TEXT`.
struct PlanAdd: ParsableCommand {
    static let configuration = CommandConfiguration(commandName: "add", abstract: "Add a plan; it is shown before peeks and spends.")

    @OptionGroup var options: GlobalOptions

    @Option(name: .customLong("when"), help: "The moment: “I feel bored”, “I can't sleep”, “I'm waiting around”.")
    var trigger: String

    @Option(name: .customLong("then"), help: "What you will do instead: “I will take a short walk”.")
    var action: String

    func run() throws {
        let plan = try options.call(ControlEndpoints.addPlan, PlanRequest(when: trigger, then: action))
        options.emit(plan) { print("Plan \(plan.id) saved: when \(plan.when), \(plan.then). It will be shown at your next bypass.") }
    }
}
