import ArgumentParser
import ControlAPI

/// `scrolloff block ENTRY... [--reason TEXT]`: block around the clock, with a cooldown (SPEC §2, §3).
struct Block: ParsableCommand {
    static let configuration = CommandConfiguration(abstract: "Block services, categories or domains around the clock.")

    @OptionGroup var options: GlobalOptions

    @Argument(help: "Service ids (instagram), categories (social) or domains (news.example.com).")
    var entries: [String]

    @Option(name: .long, help: "Why, in your words; shown back to you if you try to undo it.")
    var reason: String?

    func validate() throws {
        if entries.isEmpty { throw ValidationError("Name at least one service, category or domain, such as `scrolloff block instagram`.") }
    }

    func run() throws {
        let answer = try options.call(ControlEndpoints.block, EntriesRequest(entries: entries, reason: reason))
        options.emit(answer) {
            print(answer.message)
            let now = answer.now ?? TimeWords.now()
            for entry in answer.entries { print(EntryWords.line(entry, now: now)) }
        }
    }
}
