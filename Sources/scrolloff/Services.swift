import ArgumentParser
import ControlAPI

/// `scrolloff services [--category C]`: the curated services and their state (SPEC §1, §13).
struct Services: ParsableCommand {
    static let configuration = CommandConfiguration(abstract: "List the services you can block by name, and their state.")

    @OptionGroup var options: GlobalOptions

    @Option(name: .long, help: "Only this category (social, video, news, …).")
    var category: String?

    func run() throws {
        let answer = try options.call(ControlEndpoints.services, query: [(ControlQuery.category, category)])
        options.emit(answer) {
            let width = answer.services.map(\.id.count).max() ?? 0
            for s in answer.services {
                let pad = String(repeating: " ", count: max(0, width - s.id.count))
                let state = s.state == .none ? "" : " · " + EntryWords.state(s.state)
                print("\(s.id)\(pad)  \(s.name) (\(s.category))\(state)")
            }
        }
    }
}
