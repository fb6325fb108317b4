import ScrollOffCore
import TOMLKit

/// Every problem found in one file, with the lines the keys are on. Shared by the readers of one
/// parse so that all problems are reported at once, not just the first.
final class ProblemLog {
    let index: KeyLineIndex
    private(set) var problems: [ConfigurationProblem] = []

    init(index: KeyLineIndex) { self.index = index }

    func report(_ path: String, _ problem: String, allowed: String? = nil) {
        problems.append(ConfigurationProblem(key: path, line: index.line(of: path), problem: problem, allowed: allowed))
    }
}

/// Typed reads of one TOML table. A read of the wrong type or out of range is reported with the
/// key's path and line and returns nil, so the caller keeps its default and goes on to find the
/// next problem. `finish()` reports every key no read asked for.
final class TableReader {
    let table: TOMLTable
    /// This table's dotted path, items counted from 1 (`profiles[2].knobs`); "" for the document.
    let path: String
    let log: ProblemLog
    private var read: Set<String> = []

    init(table: TOMLTable, path: String, log: ProblemLog) {
        self.table = table
        self.path = path
        self.log = log
    }

    func keyPath(_ key: String) -> String { ConfigPath.child(path, key) }

    func has(_ key: String) -> Bool { table[key] != nil }

    private func value(_ key: String) -> (any TOMLValueConvertible)? {
        assert(ConfigurationKeys.schema[ConfigPath.schemaPath(path)]?.contains(key) == true, "\(key) is not declared in [\(path)]")
        read.insert(key)
        return table[key]
    }

    func report(_ key: String, _ problem: String, allowed: String? = nil) {
        log.report(keyPath(key), problem, allowed: allowed)
    }

    func string(_ key: String, allowed: String) -> String? {
        guard let v = value(key) else { return nil }
        guard let s = v.string else {
            report(key, "is \(Self.describe(v)), but must be a string", allowed: allowed)
            return nil
        }
        return s
    }

    func bool(_ key: String) -> Bool? {
        guard let v = value(key) else { return nil }
        guard let b = v.bool else {
            report(key, "is \(Self.describe(v)), but must be true or false", allowed: "true or false (no quotes)")
            return nil
        }
        return b
    }

    func integer(_ key: String, in range: ClosedRange<Int>, allowed: String) -> Int? {
        guard let v = value(key) else { return nil }
        return Self.integer(v, at: keyPath(key), in: range, allowed: allowed, log: log)
    }

    static func integer(_ v: any TOMLValueConvertible, at path: String, in range: ClosedRange<Int>, allowed: String, log: ProblemLog) -> Int? {
        guard let i = v.int else {
            log.report(path, "is \(describe(v)), but must be a whole number", allowed: allowed)
            return nil
        }
        guard range.contains(i) else {
            log.report(path, "is \(i)", allowed: allowed)
            return nil
        }
        return i
    }

    /// A length of time written with units (`"2h"`, `"90min"`, `"30s"`, `"1 h 30 min"`), read by
    /// `SpanWords.parse`. A bare integer is accepted as seconds only where `integerSeconds` says so
    /// (TTLs, which DNS always counts in seconds); elsewhere `cooldown = 2` could mean 2 s, 2 min
    /// or 2 h, and guessing wrong would silently change a rule.
    func duration(_ key: String, in range: ClosedRange<Span>, allowed: String, integerSeconds: Bool = false) -> Span? {
        guard let v = value(key) else { return nil }
        let span: Span
        if let s = v.string {
            guard let parsed = SpanWords.parse(s) else {
                report(key, "is \"\(s)\", which is not a length of time",
                       allowed: "\(allowed), written with units d, h, min, s or ms, such as \"2h\", \"90min\" or \"30s\"")
                return nil
            }
            span = parsed
        } else if integerSeconds, let i = v.int {
            guard i >= 0, i <= 1_000_000_000 else {
                report(key, "is \(i)", allowed: allowed)
                return nil
            }
            span = .seconds(Int64(i))
        } else {
            let form = integerSeconds ? "a whole number of seconds or a string with units" : "a string with units"
            report(key, "is \(Self.describe(v)), but must be \(form) such as \"30s\"", allowed: allowed)
            return nil
        }
        guard range.contains(span) else {
            report(key, "is \(Self.quoted(v))", allowed: allowed)
            return nil
        }
        return span
    }

    /// The items of an array, each with its own path (`dns.listen[2]`) for messages.
    func array(_ key: String, allowed: String) -> [(value: any TOMLValueConvertible, path: String)]? {
        guard let v = value(key) else { return nil }
        guard let array = v.array else {
            report(key, "is \(Self.describe(v)), but must be an array [ … ]", allowed: "an array of \(allowed)")
            return nil
        }
        return array.enumerated().map { ($0.element, ConfigPath.item(keyPath(key), $0.offset + 1)) }
    }

    /// An array of strings; items of another type are reported and left out.
    func strings(_ key: String, allowed: String) -> [(value: String, path: String)]? {
        guard let items = array(key, allowed: allowed) else { return nil }
        var out: [(String, String)] = []
        for (item, itemPath) in items {
            guard let s = item.string else {
                log.report(itemPath, "is \(Self.describe(item)), but must be a string", allowed: allowed)
                continue
            }
            out.append((s, itemPath))
        }
        return out
    }

    /// A sub-table (`[dns]`, `[profile.knobs]`, `knobs = { … }`); an empty one when absent, so the
    /// caller reads defaults the same way.
    func table(_ key: String) -> TableReader {
        let childPath = keyPath(key)
        guard let v = value(key) else { return TableReader(table: TOMLTable(), path: childPath, log: log) }
        guard let t = v.table else {
            report(key, "is \(Self.describe(v)), but must be a table", allowed: "a [\(childPath)] section")
            return TableReader(table: TOMLTable(), path: childPath, log: log)
        }
        return TableReader(table: t, path: childPath, log: log)
    }

    /// An array of tables (`[[profiles]]`), each item with its path counted from 1.
    func tables(_ key: String) -> [TableReader] {
        guard let items = array(key, allowed: "[[\(keyPath(key))]] sections") else { return [] }
        var out: [TableReader] = []
        for (item, itemPath) in items {
            guard let t = item.table else {
                log.report(itemPath, "is \(Self.describe(item)), but must be a table", allowed: "a [[\(keyPath(key))]] section")
                continue
            }
            out.append(TableReader(table: t, path: itemPath, log: log))
        }
        return out
    }

    // MARK: Reads of declared keys

    /// The range a declared key's reader enforces, or a stop: a read of the wrong kind is a
    /// mistake in this module, which the tests of every key find.
    private func check(_ setting: Setting) {
        assert(setting.section.rawValue == ConfigPath.schemaPath(path), "\(setting.path) read in [\(path)]")
    }

    func has(_ setting: Setting) -> Bool { has(setting.key) }

    func report(_ setting: Setting, _ problem: String) { report(setting.key, problem, allowed: setting.allowed) }

    func report(_ setting: Setting, _ problem: String, allowed: String) { report(setting.key, problem, allowed: allowed) }

    func string(_ setting: Setting) -> String? {
        check(setting)
        return string(setting.key, allowed: setting.allowed)
    }

    func bool(_ setting: Setting) -> Bool? {
        check(setting)
        return bool(setting.key)
    }

    func strings(_ setting: Setting) -> [(value: String, path: String)]? {
        check(setting)
        return strings(setting.key, allowed: setting.allowed)
    }

    /// An array of strings where one string is still taken as it was written before lists: as
    /// the array of that one string.
    func stringOrStrings(_ setting: Setting) -> [(value: String, path: String)]? {
        check(setting)
        if let one = table[setting.key]?.string {
            _ = value(setting.key)
            return [(one, keyPath(setting.key))]
        }
        return strings(setting.key, allowed: setting.allowed)
    }

    func array(_ setting: Setting) -> [(value: any TOMLValueConvertible, path: String)]? {
        check(setting)
        return array(setting.key, allowed: setting.allowed)
    }

    func integer(_ setting: Setting) -> Int? {
        check(setting)
        guard case .integer(let range) = setting.value else { preconditionFailure("\(setting.path) is not declared a whole number") }
        return integer(setting.key, in: range, allowed: setting.allowed)
    }

    /// A `.duration` or `.seconds` key within its declared range.
    func duration(_ setting: Setting) -> Span? {
        check(setting)
        switch setting.value {
        case .duration(let range): return duration(setting.key, in: range, allowed: setting.allowed)
        case .seconds(let range): return duration(setting.key, in: range, allowed: setting.allowed, integerSeconds: true)
        default: preconditionFailure("\(setting.path) is not declared a length of time")
        }
    }

    /// One of a `.choice` key's words, as the type that spells them.
    func choice<T: RawRepresentable>(_ setting: Setting, as type: T.Type) -> T? where T.RawValue == String {
        guard let text = string(setting) else { return nil }
        guard let value = T(rawValue: text) else {
            report(setting, "is \"\(text)\"")
            return nil
        }
        return value
    }

    func table(_ section: SettingSection) -> TableReader {
        assert(section.parent == ConfigPath.schemaPath(path), "[\(section.rawValue)] read in [\(path)]")
        return table(section.key)
    }

    func tables(_ section: SettingSection) -> [TableReader] {
        assert(section.parent == ConfigPath.schemaPath(path), "[[\(section.rawValue)]] read in [\(path)]")
        return tables(section.key)
    }

    /// Reports every key of this table that no read asked for, with the nearest known key.
    func finish() {
        let schemaPath = ConfigPath.schemaPath(path)
        for key in table.keys where !read.contains(key) {
            let section = path.isEmpty ? "the top level" : "[\(schemaPath)]"
            var problem = "is not a setting of \(section)"
            if let near = ConfigurationSchema.suggestion(for: key, inTable: schemaPath) {
                problem += " (did you mean \(near)?)"
            }
            let known = (ConfigurationKeys.schema[schemaPath] ?? []).joined(separator: ", ")
            log.report(keyPath(key), problem, allowed: known)
        }
    }

    /// A value as the person wrote it, for messages: `"30s"`, `30`, `true`.
    static func quoted(_ v: any TOMLValueConvertible) -> String {
        if let s = v.string { return "\"\(s)\"" }
        if let i = v.int { return String(i) }
        return describe(v)
    }

    /// What a value is, for a wrong-type message: `the integer 30`, `the string "x"`, `an array`.
    static func describe(_ v: any TOMLValueConvertible) -> String {
        switch v.type {
        case .string: "the string \(quoted(v))"
        case .int: "the integer \(quoted(v))"
        case .double: "the number \(v.double.map { String($0) } ?? "")"
        case .bool: v.bool == true ? "true" : "false"
        case .array: "an array"
        case .table: "a table"
        case .date, .time, .dateTime: "a \(v.type)"
        }
    }
}
