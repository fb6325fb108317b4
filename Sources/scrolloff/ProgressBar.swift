/// One redrawn line of download progress; used only when stdout is a terminal.
struct ProgressBar {
    private var drawn = false
    private let width = 24

    mutating func show(name: String, received: Int64, expected: Int64?) {
        var line = "\r\u{1B}[K  \(name)  "
        if let expected, expected > 0 {
            let fraction = min(Double(received) / Double(expected), 1)
            let filled = Int(fraction * Double(width))
            line += "[" + String(repeating: "#", count: filled) + String(repeating: "-", count: width - filled) + "] "
            line += "\(Int(fraction * 100))%  \(Format.bytes(received)) of \(Format.bytes(expected))"
        } else {
            line += Format.bytes(received)
        }
        Terminal.write(line)
        drawn = true
    }

    /// Erases the bar so the results print on a clean line.
    mutating func clear() {
        if drawn { Terminal.write("\r\u{1B}[K") }
        drawn = false
    }
}
