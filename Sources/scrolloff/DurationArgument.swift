import ArgumentParser
import ScrollOffCore

/// A duration argument: `45m`, `2h`, `1h30m`, `90s`, `90min` — the words of `SpanWords.parse`, the
/// same ones `scrolloff.toml` accepts — longer than zero and in whole seconds.
struct DurationArgument: ExpressibleByArgument, Sendable {
    let seconds: Int64

    init?(argument: String) {
        guard let seconds = Self.parse(argument) else { return nil }
        self.seconds = seconds
    }

    static func parse(_ text: String) -> Int64? {
        guard let span = SpanWords.parse(text), span > .zero, span.milliseconds % 1000 == 0 else { return nil }
        return span.milliseconds / 1000
    }

    static var defaultValueDescription: String { "45m" }
}
