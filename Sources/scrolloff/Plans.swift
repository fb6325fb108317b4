import ArgumentParser
import ControlAPI

/// What to do instead, shown at a bypass: plans and alternatives (SPEC §8).
enum PlansVerbs: VerbFeature {
    static var commands: [any ParsableCommand.Type] { [Plan.self, Alternatives.self] }
}

/// `scrolloff plan`: "when X, I will Y" plans, shown at every bypass (SPEC §8).
struct Plan: ParsableCommand {
    static let configuration = CommandConfiguration(
        abstract: "Plans for the moments you reach for your phone: “when I feel bored, I will take a short walk”.",
        subcommands: [PlanAdd.self, PlanList.self, PlanArchive.self]
    )
}

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

/// `scrolloff plan archive ID`: hidden, never deleted (SPEC §12).
struct PlanArchive: ParsableCommand {
    static let configuration = CommandConfiguration(commandName: "archive", abstract: "Archive a plan; it is no longer shown.")

    @OptionGroup var options: GlobalOptions

    @Argument(help: "The plan's id, as `scrolloff plan list` shows it.")
    var id: Int64

    func run() throws {
        let answer = try options.call(ControlEndpoints.archivePlan, parameter: "\(id)")
        options.emit(answer) { print(answer.message) }
    }
}

/// `scrolloff alternatives`: things to do instead, shown at a bypass (SPEC §8).
struct Alternatives: ParsableCommand {
    static let configuration = CommandConfiguration(
        abstract: "Your short list of things to do instead, shown at a bypass.",
        subcommands: [AlternativesAdd.self, AlternativesList.self]
    )
}

/// `scrolloff alternatives add TEXT`.
struct AlternativesAdd: ParsableCommand {
    static let configuration = CommandConfiguration(commandName: "add", abstract: "Add something to do instead, in a few words.")

    @OptionGroup var options: GlobalOptions

    @Argument(help: "Such as: text a friend.")
    var words: [String]

    func validate() throws {
        if words.isEmpty { throw ValidationError("Write the alternative in a few words, such as `scrolloff alternatives add text a friend`.") }
    }

    func run() throws {
        let added = try options.call(ControlEndpoints.addAlternative, AlternativeRequest(text: words.joined(separator: " ")))
        options.emit(added) { print("Added “\(added.text)”. It will be shown at your next bypass.") }
    }
}

/// `scrolloff alternatives list`, newest first.
struct AlternativesList: ParsableCommand {
    static let configuration = CommandConfiguration(commandName: "list", abstract: "Show your alternatives.")

    @OptionGroup var options: GlobalOptions

    func run() throws {
        let answer = try options.call(ControlEndpoints.alternatives)
        options.emit(answer) {
            guard !answer.alternatives.isEmpty else {
                print("No alternatives yet. `scrolloff alternatives add text a friend` adds one.")
                return
            }
            for alternative in answer.alternatives { print("• \(alternative.text)") }
        }
    }
}
