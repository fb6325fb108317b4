/// The line on which each key of a TOML document is written, by dotted path
/// (`dns.listen`, `dns.listen[2]`, `profiles[1].knobs.cooldown`).
///
/// TOMLKit (toml++) reports positions only for syntax errors, but an error about a value must say
/// where the value is. So this small scanner walks the text once more, after TOMLKit has accepted
/// it, and tracks what gives a key its path: `[table]` headers, `[[array]]` headers (counted from 1
/// per array, as the messages count them), dotted and quoted keys, inline tables and the items of
/// arrays, whose lines matter when an array spans several lines. Strings, including multi-line
/// ones, are skipped so that nothing inside them is mistaken for a key.
struct KeyLineIndex {
    private(set) var lines: [String: Int] = [:]

    /// The line of `path`, or of its nearest enclosing key or table when the path itself was not
    /// written (a table implied by `[profile.knobs]`, a value inside an inline table).
    func line(of path: String) -> Int? {
        var current = Substring(path)
        while !current.isEmpty {
            if let line = lines[String(current)] { return line }
            guard let cut = current.lastIndex(where: { $0 == "." || $0 == "[" }) else { return nil }
            current = current[..<cut]
        }
        return nil
    }

    init(text: String) {
        var scanner = Scanner(bytes: Array(text.utf8))
        scanner.document()
        lines = scanner.lines
    }
}

/// Joins path components the way every message writes them.
enum ConfigPath {
    static func child(_ parent: String, _ key: String) -> String {
        let written = key.utf8.allSatisfy(Scanner.isBare) && !key.isEmpty ? key : "\"\(key)\""
        return parent.isEmpty ? written : "\(parent).\(written)"
    }

    /// `parent[n]`, counted from 1.
    static func item(_ parent: String, _ number: Int) -> String { "\(parent)[\(number)]" }

    /// The path without item numbers, as the schema knows tables: `profiles[2].knobs` → `profiles.knobs`.
    static func schemaPath(_ path: String) -> String {
        var out = ""
        var skipping = false
        for ch in path {
            if ch == "[" { skipping = true } else if ch == "]" { skipping = false } else if !skipping { out.append(ch) }
        }
        return out
    }
}

private struct Scanner {
    let bytes: [UInt8]
    var position = 0
    var line = 1
    var lines: [String: Int] = [:]
    /// How many `[[path]]` headers have been seen per array, keyed by the array's full path.
    var arrayCounts: [String: Int] = [:]

    init(bytes: [UInt8]) { self.bytes = bytes }

    static func isBare(_ byte: UInt8) -> Bool {
        (UInt8(ascii: "a")...UInt8(ascii: "z")).contains(byte) || (UInt8(ascii: "A")...UInt8(ascii: "Z")).contains(byte)
            || (UInt8(ascii: "0")...UInt8(ascii: "9")).contains(byte) || byte == UInt8(ascii: "_") || byte == UInt8(ascii: "-")
    }

    var current: UInt8? { position < bytes.count ? bytes[position] : nil }

    mutating func advance() {
        if current == UInt8(ascii: "\n") { line += 1 }
        position += 1
    }

    mutating func skipSpaces() {
        while let c = current, c == UInt8(ascii: " ") || c == UInt8(ascii: "\t") || c == UInt8(ascii: "\r") { advance() }
    }

    /// Spaces, newlines and comments: what may sit between array items.
    mutating func skipBlank() {
        while let c = current {
            if c == UInt8(ascii: "#") {
                while let d = current, d != UInt8(ascii: "\n") { advance() }
            } else if c == UInt8(ascii: " ") || c == UInt8(ascii: "\t") || c == UInt8(ascii: "\r") || c == UInt8(ascii: "\n") {
                advance()
            } else {
                return
            }
        }
    }

    mutating func skipRestOfLine() {
        while let c = current, c != UInt8(ascii: "\n") { advance() }
    }

    mutating func document() {
        var table = ""
        while true {
            skipBlank()
            guard let c = current else { return }
            if c == UInt8(ascii: "[") {
                table = header()
            } else {
                keyValue(in: table)
            }
            skipRestOfLine()
        }
    }

    /// `[a.b]` or `[[a.b]]`; returns the table's path with the item numbers of enclosing arrays.
    mutating func header() -> String {
        let headerLine = line
        advance()
        let isArray = current == UInt8(ascii: "[")
        if isArray { advance() }
        var path = ""
        let keys = dottedKey()
        for (i, key) in keys.enumerated() {
            path = ConfigPath.child(path, key)
            if i == keys.count - 1, isArray {
                let number = arrayCounts[path, default: 0] + 1
                arrayCounts[path] = number
                path = ConfigPath.item(path, number)
            } else if let number = arrayCounts[path] {
                // A sub-table of an array of tables belongs to its latest item (TOML 1.0 §Array of Tables).
                path = ConfigPath.item(path, number)
            }
        }
        lines[path] = headerLine
        return path
    }

    mutating func keyValue(in table: String) {
        let keyLine = line
        var path = table
        let keys = dottedKey()
        guard !keys.isEmpty else { skipRestOfLine(); return }
        for key in keys { path = ConfigPath.child(path, key) }
        lines[path] = keyLine
        skipSpaces()
        guard current == UInt8(ascii: "=") else { return }
        advance()
        value(at: path)
    }

    /// `a`, `a.b`, `"a.b".c`, `'x'`: the components of a key, stopping before `=` or `]`.
    mutating func dottedKey() -> [String] {
        var keys: [String] = []
        while true {
            skipSpaces()
            guard let c = current else { return keys }
            if c == UInt8(ascii: "\"") || c == UInt8(ascii: "'") {
                keys.append(quotedKey(quote: c))
            } else if Self.isBare(c) {
                let start = position
                while let d = current, Self.isBare(d) { advance() }
                keys.append(String(decoding: bytes[start..<position], as: UTF8.self))
            } else {
                return keys
            }
            skipSpaces()
            guard current == UInt8(ascii: ".") else { return keys }
            advance()
        }
    }

    mutating func quotedKey(quote: UInt8) -> String {
        advance()
        var out: [UInt8] = []
        while let c = current, c != quote, c != UInt8(ascii: "\n") {
            if quote == UInt8(ascii: "\""), c == UInt8(ascii: "\\") {
                advance()
                if let escaped = current { out.append(escaped) }
            } else {
                out.append(c)
            }
            advance()
        }
        if current == quote { advance() }
        return String(decoding: out, as: UTF8.self)
    }

    mutating func value(at path: String) {
        skipSpaces()
        guard let c = current else { return }
        switch c {
        case UInt8(ascii: "\""), UInt8(ascii: "'"):
            skipString(quote: c)
        case UInt8(ascii: "["):
            advance()
            var number = 0
            while true {
                skipBlank()
                guard let d = current else { return }
                if d == UInt8(ascii: "]") { advance(); return }
                if d == UInt8(ascii: ",") { advance(); continue }
                number += 1
                let item = ConfigPath.item(path, number)
                lines[item] = line
                let before = position
                value(at: item)
                if position == before { advance() } // never loop on a byte nothing consumes
            }
        case UInt8(ascii: "{"):
            advance()
            while true {
                skipSpaces()
                guard let d = current, d != UInt8(ascii: "\n") else { return }
                if d == UInt8(ascii: "}") { advance(); return }
                if d == UInt8(ascii: ",") { advance(); continue }
                let before = position
                keyValue(in: path)
                if position == before { advance() }
            }
        default:
            // A number, boolean or date: up to whatever ends a value.
            while let d = current, d != UInt8(ascii: ","), d != UInt8(ascii: "]"), d != UInt8(ascii: "}"),
                  d != UInt8(ascii: "#"), d != UInt8(ascii: "\n") {
                advance()
            }
        }
    }

    /// Skips a basic or literal string, single- or multi-line, honouring escapes in basic strings.
    mutating func skipString(quote: UInt8) {
        let triple = position + 2 < bytes.count && bytes[position + 1] == quote && bytes[position + 2] == quote
        if triple {
            advance(); advance(); advance()
            while let c = current {
                if quote == UInt8(ascii: "\""), c == UInt8(ascii: "\\") { advance(); advance(); continue }
                if c == quote, position + 2 < bytes.count, bytes[position + 1] == quote, bytes[position + 2] == quote {
                    advance(); advance(); advance()
                    // Up to two more quotes may belong to the content (`""""x""""` is legal TOML).
                    while current == quote { advance() }
                    return
                }
                advance()
            }
            return
        }
        advance()
        while let c = current, c != UInt8(ascii: "\n") {
            if quote == UInt8(ascii: "\""), c == UInt8(ascii: "\\") { advance(); advance(); continue }
            advance()
            if c == quote { return }
        }
    }
}
