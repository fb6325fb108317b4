/// The did-you-mean of Scroll Off: the one known word nearest to a word that was not understood
/// (`blokc` → `block`, `instagarm` → `instagram`). The CLI uses it for verbs and sub-verbs, the
/// engine for entries and services, the configuration reader for keys, so a typo gets the same
/// help everywhere.
public enum NearestWord {
    /// Words longer than this get no suggestion: no verb, service or key is that long, and the
    /// distance table grows with the product of both lengths.
    public static let longestWord = 64

    /// The candidate nearest to `word` (ignoring case), or nil when none is close.
    ///
    /// Close means within one edit for words of up to four characters and two for longer ones, so
    /// a short word is not "corrected" into an unrelated one (`ls` is not `use`). Only the single
    /// nearest is offered; ties go to the first in alphabetical order so the answer is stable.
    public static func suggestion(for word: String, among candidates: [String]) -> String? {
        let typed = word
        let word = word.lowercased()
        guard !word.isEmpty, word.count <= longestWord else { return nil }
        let limit = word.count <= 4 ? 1 : 2
        var best: (candidate: String, distance: Int)?
        // `BLOCK` is not `block` as typed, so it gets `block`; only the very word is skipped.
        for candidate in candidates where candidate != typed && !candidate.isEmpty {
            let lower = candidate.lowercased()
            // Lengths further apart than the limit cannot be within it.
            guard abs(lower.count - word.count) <= limit else { continue }
            let d = distance(word, lower)
            guard d <= limit else { continue }
            if let b = best, b.distance < d || (b.distance == d && b.candidate <= candidate) { continue }
            best = (candidate, d)
        }
        return best?.candidate
    }

    /// Levenshtein distance with adjacent transpositions counted as one edit (`blokc` → `block`
    /// is one), the optimal-string-alignment form of Damerau–Levenshtein, over characters.
    public static func distance(_ a: String, _ b: String) -> Int {
        let a = Array(a), b = Array(b)
        if a.isEmpty { return b.count }
        if b.isEmpty { return a.count }
        var previous2 = [Int](repeating: 0, count: b.count + 1)
        var previous = Array(0...b.count)
        var row = [Int](repeating: 0, count: b.count + 1)
        for i in 1...a.count {
            row[0] = i
            for j in 1...b.count {
                let cost = a[i - 1] == b[j - 1] ? 0 : 1
                row[j] = min(previous[j] + 1, row[j - 1] + 1, previous[j - 1] + cost)
                if i > 1, j > 1, a[i - 1] == b[j - 2], a[i - 2] == b[j - 1] {
                    row[j] = min(row[j], previous2[j - 2] + 1)
                }
            }
            previous2 = previous
            previous = row
        }
        return previous[b.count]
    }
}
