import ArgumentParser
import ControlAPI

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
