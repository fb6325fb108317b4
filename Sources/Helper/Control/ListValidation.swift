import DomainLists
import ListFetch

/// The validator the list store runs on every downloaded copy: the DomainLists parser with its
/// bad-line budget (issue 4: beyond the budget the whole update is rejected and the previous copy
/// stays in force).
public enum DomainListValidator {
    public static func make(budget: BadLineBudget = .default) -> ListValidator {
        { path in
            let parsed = try parse(contentsOfFile: path, budget: budget)
            return ValidationSummary(
                entryCount: parsed.rules.count,
                badLineCount: parsed.badLineCount,
                // The parser keeps the reason (which quotes the offending text), not the raw line.
                badLines: parsed.badLines.map { .init(lineNumber: $0.lineNumber, text: "", reason: $0.reason.description) }
            )
        }
    }

    /// The one way a list copy is parsed, when it is stored and when it is put in force
    /// (`HelperEngine.parseLists`), so a copy accepted under the configured budget is never
    /// rejected when applied.
    public static func parse(contentsOfFile path: String, budget: BadLineBudget) throws(ListParseError) -> ParsedList {
        try ListParser.parse(contentsOfFile: path, options: ListParseOptions(budget: budget))
    }
}
