import ScrollOffCore

/// Every key `scrolloff.toml` knows, per table, as the messages name tables (array items without
/// numbers), taken from the declarations (`ConfigurationKeys`). Unknown keys are errors, not
/// warnings: a misspelt `blocked_tll` silently ignored would leave a person believing a setting is
/// in force that is not.
enum ConfigurationSchema {
    static var tables: [String: [String]] { ConfigurationKeys.schema }

    /// Every full key path (`dns.listen`), for suggesting the right table for a key put in the wrong one.
    static let allPaths: [String] = tables.flatMap { table, keys in keys.map { table.isEmpty ? $0 : "\(table).\($0)" } }

    /// The known key nearest to `key` in `table`, or elsewhere when `key` belongs to another table.
    static func suggestion(for key: String, inTable table: String) -> String? {
        let here = tables[table] ?? []
        if let near = nearest(key, among: here) { return near }
        // The right name in the wrong table: `listen` under [helper] is `dns.listen`.
        let elsewhere = allPaths.filter { $0.split(separator: ".").last.map(String.init) == key }
        if let first = elsewhere.sorted().first { return "[\(first.split(separator: ".").dropLast().joined(separator: "."))] \(key)" }
        return nil
    }

    /// The candidate within an edit distance of about a third of the key's length, closest first.
    static func nearest(_ key: String, among candidates: [String]) -> String? {
        let limit = max(2, key.count / 3)
        let scored = candidates.map { ($0, editDistance(key.lowercased(), $0)) }.filter { $0.1 <= limit }
        return scored.min { $0.1 != $1.1 ? $0.1 < $1.1 : $0.0 < $1.0 }?.0
    }

    /// Levenshtein distance with adjacent transpositions counted as one edit (`tll` → `ttl`); the
    /// CLI's did-you-mean uses the same one.
    static func editDistance(_ a: String, _ b: String) -> Int {
        NearestWord.distance(a, b)
    }
}
