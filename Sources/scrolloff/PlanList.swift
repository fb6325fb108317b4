import ArgumentParser
import ControlAPI

/// `scrolloff plan list` (SPEC §13 `plans[]` with `id`, `when`, `then`).
struct PlanList: ParsableCommand {
    static let configuration = CommandConfiguration(commandName: "list", abstract: "Show your plans, most recent first.")

    @OptionGroup var options: GlobalOptions

    @Flag(name: .long, help: "Include archived plans.")
    var all = false

    func run() throws {
        let answer = try options.call(ControlEndpoints.plans, query: [(ControlQuery.archived, ControlQuery.flag(all))])
        options.emit(answer) {
            guard !answer.plans.isEmpty else {
                print("No plans yet. `scrolloff plan add --when \"I feel bored\" --then \"I will take a short walk\"` adds one.")
                return
            }
            for plan in answer.plans {
                let shown = plan.shownCount == 0 ? "" : Terminal.dim(" · shown \(plan.shownCount)×")
                let archived = plan.archived ? Terminal.dim(" · archived") : ""
                print("\(plan.id)  when \(plan.when), \(plan.then)\(shown)\(archived)")
            }
        }
    }
}
