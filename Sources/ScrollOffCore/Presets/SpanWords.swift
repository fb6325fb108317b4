/// Short, numbers-first words for a length of time (`"1 h 12 min"`, `"45 s"`, `"1.5 s"`), used in
/// messages. Calendar-free on purpose: the CLI formats instants in the person's zone itself.
enum SpanWords {
    static func describe(_ span: Span) -> String {
        let ms = span.milliseconds
        if ms < 0 { return "-" + describe(Span(milliseconds: -ms)) }
        if ms % 1000 != 0 {
            let tenths = ms / 100
            return "\(tenths / 10).\(tenths % 10) s"
        }
        return describe(seconds: ms / 1000)
    }

    static func describe(seconds s: Int64) -> String {
        if s < 0 { return "-" + describe(seconds: -s) }
        let h = s / 3600, m = (s % 3600) / 60, sec = s % 60
        var parts: [String] = []
        if h > 0 { parts.append("\(h) h") }
        if m > 0 { parts.append("\(m) min") }
        if sec > 0 || parts.isEmpty { parts.append("\(sec) s") }
        return parts.joined(separator: " ")
    }
}
