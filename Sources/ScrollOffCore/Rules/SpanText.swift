/// Short, numbers-first lengths for refusal messages: "1 h 12 min", "40 s".
enum SpanText {
    static func describe(_ span: Span) -> String {
        let seconds = max(0, (span.milliseconds + 999) / 1000) // round up: never promise earlier than true
        if seconds < 60 { return "\(seconds) s" }
        let minutes = (seconds + 59) / 60
        if minutes < 60 { return "\(minutes) min" }
        let hours = minutes / 60, rest = minutes % 60
        return rest == 0 ? "\(hours) h" : "\(hours) h \(rest) min"
    }
}
