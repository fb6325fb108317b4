import ArgumentParser
import ScrollOffCore

/// What `scrolloff` does to the words typed before ArgumentParser reads them, so a CLI forgives
/// what people type. ArgumentParser reads an option only in the command that declares it, and the
/// global options (`GlobalOptions`) are declared by each verb, not by `scrolloff` itself; so
/// `scrolloff --socket S block x` was "Unknown option '--socket'". Here:
///
/// - global options typed before the verb (or between a verb and its sub-verb) move behind it;
/// - the same global option given twice with different values is a usage error that names both;
/// - an unknown verb or sub-verb gets the nearest one (`blokc` → `block`, `NearestWord`);
/// - a number and a unit typed as two words (`--for 10 minutes`, `--from 9 pm`) become one value.
enum ForgivingArguments {
    /// A usage error found here (exit 2, like ArgumentParser's own).
    struct UsageError: Error, Equatable {
        let message: String
    }

    static func normalize(_ arguments: [String], root: any ParsableCommand.Type = ScrollOff.self) throws(UsageError) -> [String] {
        // Words after `--` are values, never options or verbs.
        let end = arguments.firstIndex(of: "--") ?? arguments.endIndex
        var head = joinSplitValues(Array(arguments[..<end]))
        let tail = Array(arguments[end...])
        try checkNoConflicts(head)

        var hoisted: [String] = []
        var command = root
        var index = 0
        while index < head.count {
            let word = head[index]
            if let taken = globalOption(at: index, in: head) {
                hoisted += head[index..<index + taken]
                head.removeSubrange(index..<index + taken)
                continue
            }
            let subcommands = command.configuration.subcommands
            // `help` is ArgumentParser's own (`scrolloff help block`).
            guard !subcommands.isEmpty, !word.hasPrefix("-"), word != "help" else { break }
            if let next = subcommands.first(where: { names(of: $0).contains(word) }) {
                command = next
                index += 1
                continue
            }
            try refuseUnknownVerb(word, path: Array(head[..<index]), among: subcommands,
                                  hasDefault: command.configuration.defaultSubcommand != nil)
            break
        }
        // The verb reads them wherever they stand; an exact repeat left behind adds nothing.
        return head + hoisted + tail
    }

    /// How many words the global option at `index` takes (`--json` 1, `--socket S` 2,
    /// `--socket=S` 1), or nil when `head[index]` is not one.
    static func globalOption(at index: Int, in head: [String]) -> Int? {
        let word = head[index]
        if GlobalOptions.flagNames.contains(word) { return 1 }
        if GlobalOptions.valueNames.contains(word) { return index + 1 < head.count ? 2 : 1 }
        if GlobalOptions.valueNames.contains(where: { word.hasPrefix($0 + "=") }) { return 1 }
        return nil
    }

    /// `--socket A block x --socket B`: which one was meant cannot be known, so neither is used.
    static func checkNoConflicts(_ head: [String]) throws(UsageError) {
        var seen: [String: String] = [:]
        var index = 0
        while index < head.count {
            let word = head[index]
            var name: String?, value: String?
            if GlobalOptions.valueNames.contains(word), index + 1 < head.count {
                (name, value) = (word, head[index + 1])
                index += 1
            } else if let option = GlobalOptions.valueNames.first(where: { word.hasPrefix($0 + "=") }) {
                (name, value) = (option, String(word.dropFirst(option.count + 1)))
            }
            index += 1
            guard let name, let value else { continue }
            if let earlier = seen[name], earlier != value {
                throw UsageError(message: "\(name) is given twice, as `\(earlier)` and as `\(value)`: keep the one you mean "
                    + "(`\(name) \(earlier)` or `\(name) \(value)`) and remove the other.")
            }
            seen[name] = value
        }
    }

    /// The names a command answers to.
    static func names(of command: any ParsableCommand.Type) -> [String] {
        [command._commandName] + command.configuration.aliases
    }

    /// An unknown verb: the nearest known one, if one is near. Under a verb with a default sub-verb
    /// (`requests` lists) an unknown word may be the default's argument, so only a near miss of a
    /// sub-verb is refused there.
    static func refuseUnknownVerb(_ word: String, path: [String], among subcommands: [any ParsableCommand.Type], hasDefault: Bool) throws(UsageError) {
        let known = subcommands.flatMap(names(of:))
        let near = NearestWord.suggestion(for: word, among: known)
        let typed = (["scrolloff"] + path.filter { !$0.hasPrefix("-") }).joined(separator: " ")
        if let near {
            throw UsageError(message: "`\(word)` is not a verb of `\(typed)`: did you mean `\(typed) \(near)`? `\(typed) --help` lists them.")
        }
        if !hasDefault {
            throw UsageError(message: "`\(word)` is not a verb of `\(typed)`; the verbs are \(known.joined(separator: ", ")). `\(typed) --help` says what each does.")
        }
    }

    /// `10` `minutes` → `10 minutes`; `9` `pm` and `9:30` `pm` → `9 pm`, `9:30 pm`. A shell
    /// splits them, but people type them so; joined, they read as one duration or time.
    static func joinSplitValues(_ words: [String]) -> [String] {
        var out: [String] = []
        for word in words {
            if let last = out.last, isBareNumber(last) || isClock(last),
               SpanWords.isUnitWord(word) && isBareNumber(last) || ["am", "pm"].contains(word.lowercased()) {
                out[out.count - 1] = last + " " + word
            } else {
                out.append(word)
            }
        }
        return out
    }

    /// `10`, `+15`, `-10`: ASCII digits with an optional sign.
    static func isBareNumber(_ word: String) -> Bool {
        let digits = word.first == "+" || word.first == "-" ? word.dropFirst() : Substring(word)
        return !digits.isEmpty && digits.count <= 12 && digits.allSatisfy { $0.isASCII && $0.isNumber }
    }

    /// `9:30`: one or two digits, a colon, two digits.
    static func isClock(_ word: String) -> Bool {
        let parts = word.split(separator: ":", omittingEmptySubsequences: false)
        return parts.count == 2 && (1...2).contains(parts[0].count) && parts[1].count == 2
            && parts.allSatisfy { $0.allSatisfy { $0.isASCII && $0.isNumber } }
    }
}
