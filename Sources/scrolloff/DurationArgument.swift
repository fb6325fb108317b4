import ArgumentParser
import ScrollOffCore

/// A duration argument: `45m`, `2h`, `1h30`, `1h30m`, `90s`, `10 minutes` — the words of
/// `SpanWords.parse`, the same ones `scrolloff.toml` accepts — longer than zero and in whole
/// seconds. Read through `transform:` (not `ExpressibleByArgument`) so a refusal can say the
/// accepted forms instead of ArgumentParser's bare "is invalid".
struct DurationArgument: Sendable {
    let seconds: Int64

    /// The forms a refusal names, numbers first.
    static let acceptedForms = "write 90s, 10m, 1h30 or 2h"

    /// `transform:` for `@Argument` and `@Option`.
    static func reading(_ text: String) throws -> DurationArgument {
        guard let seconds = parse(text) else { throw ValidationError(refusal(text)) }
        return DurationArgument(seconds: seconds)
    }

    static func parse(_ text: String) -> Int64? {
        guard let span = SpanWords.parse(text), span > .zero, span.milliseconds % 1000 == 0 else { return nil }
        return span.milliseconds / 1000
    }

    /// "`10 parsecs` is not a duration: write 90s, 10m, 1h30 or 2h".
    static func refusal(_ text: String) -> String {
        if SpanWords.parse(text) == .zero { return "`\(text)` is no time at all: \(acceptedForms)." }
        return "`\(text)` is not a duration: \(acceptedForms) (whole seconds, each number at most 1000000)."
    }
}
