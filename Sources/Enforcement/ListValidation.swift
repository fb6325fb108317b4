import DomainLists
import Foundation
import ListFetch
import LowPriority

/// The validator the list store runs on every downloaded copy: the DomainLists parser with its
/// bad-line budget (SPEC §1: beyond the budget the whole update is rejected and the previous copy
/// stays in force).
public enum DomainListValidator {
    /// `copies` keeps the parsed rules of an accepted copy for the code that puts it in force
    /// (`HelperEngine.parseLists`), so the copy is not parsed again.
    public static func make(budget: BadLineBudget = .default, keepingIn copies: ParsedCopies? = nil) -> ListValidator {
        { path in
            let parsed = try parse(contentsOfFile: path, budget: budget)
            copies?.keep(parsed.rules, parsedFrom: path)
            return ValidationSummary(
                // The rules as the lines gave them: a repeat the parser did not store still counts.
                entryCount: parsed.rules.countWithRepeats,
                badLineCount: parsed.badLineCount,
                // The parser keeps the reason (which quotes the offending text), not the raw line.
                badLines: parsed.badLines.map { .init(lineNumber: $0.lineNumber, text: "", reason: $0.reason.description) }
            )
        }
    }

    /// The store's `ListDropper`: the rules of the `kept` files that `newCopy` lacks, written as
    /// adblock lines (`||name^`, `|name^`, `||*.name^`, `@@` for allow rules), which the same
    /// parser reads back exactly, so the held file is a list like any other.
    /// The new copy's rules come from `copies` when the validator just parsed it.
    public static func dropper(budget: BadLineBudget = .default, reading copies: ParsedCopies? = nil) -> ListDropper {
        { kept, newCopy, output in
            // All of it at a low priority, not only the parses: the difference of two copies of a
            // million names runs for as long as a parse, and on the event loops' core it held
            // them up during a refresh (`perf sched`, SPEC §9).
            try LowPriorityWork.run { () throws -> Int in
                // Compared on the packed rules: a Set<ListRule> of a million names took seconds and
                // hundreds of MB on every refresh of a held list (SPEC §9).
                let now = try copies?.peek(newCopy) ?? parse(contentsOfFile: newCopy, budget: budget).rules
                var dropped = Set<ListRule>()
                // A copy that lost most of its names drops up to a million: these loops yield too.
                for path in kept {
                    for rule in try parse(contentsOfFile: path, budget: budget).rules.subtracting(now) {
                        CooperativeYield.point()
                        dropped.insert(rule)
                    }
                }
                var text = "! Names a refresh dropped while a rule held this list; in force until the lock ends.\n"
                for rule in dropped.sorted(by: { ($0.name, $0.scope.rawValue, $0.action.rawValue) < ($1.name, $1.scope.rawValue, $1.action.rawValue) }) {
                    CooperativeYield.point()
                    text += line(for: rule) + "\n"
                }
                try StepwiseFile.write(text, to: output)
                return dropped.count
            }
        }
    }

    static func line(for rule: ListRule) -> String {
        let body = switch rule.scope {
        case .nameAndSubdomains: "||\(rule.name.text)^"
        case .exactName: "|\(rule.name.text)^"
        case .subdomainsOnly: "||*.\(rule.name.text)^"
        }
        return rule.action == .allow ? "@@" + body : body
    }

    /// The one way a list copy is parsed, when it is stored and when it is put in force
    /// (`HelperEngine.parseLists`), so a copy accepted under the configured budget is never
    /// rejected when applied.
    /// Runs at a low priority, so the event loops answer while a large copy is read (`LowPriorityWork`).
    public static func parse(contentsOfFile path: String, budget: BadLineBudget) throws(ListParseError) -> ParsedList {
        try LowPriorityWork.run { () throws(ListParseError) -> ParsedList in
            try ListParser.parse(contentsOfFile: path, options: ListParseOptions(budget: budget))
        }
    }
}
