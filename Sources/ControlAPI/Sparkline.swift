/// Text charts for the terminal (SPEC §7 "sparklines and heatmaps"): one block character per value.
public enum Sparkline {
    public static let blocks: [Character] = ["▁", "▂", "▃", "▄", "▅", "▆", "▇", "█"]

    /// Each value scaled to the largest: 0 is the lowest block, any value above 0 at least the
    /// second, the largest the full block; all zero stays flat.
    public static func line<T: BinaryInteger>(_ values: [T]) -> String {
        let top = values.max() ?? 0
        guard top > 0 else { return String(repeating: blocks[0], count: values.count) }
        return String(values.map { v -> Character in
            guard v > 0 else { return blocks[0] }
            let i = Int((v * 7 + top / 2) / top)
            return blocks[min(7, max(1, i))]
        })
    }

    /// Sums of `chunk` consecutive values (a year of days as weeks), the last chunk possibly shorter.
    public static func chunked<T: BinaryInteger>(_ values: [T], by chunk: Int) -> [T] {
        stride(from: 0, to: values.count, by: chunk).map { values[$0..<min($0 + chunk, values.count)].reduce(0, +) }
    }

    /// The hour axis under a 24-column heatmap: labels at 0, 6, 12 and 18.
    public static let hourAxis = "0     6     12    18   23"
}
