/// Every declared key, per table, in the order of the sample and the reference.
public enum ConfigurationKeys {
    public static let all: [Setting] =
        HelperKeys.all + DNSKeys.all + ListKeys.all + ListKeys.source + MetricsKeys.all + FirewallKeys.all + WebKeys.all
        + DigestKeys.all + StoreKeys.all + NotifyKeys.all + ProfileKeys.all + ProfileKeys.knobs + ProfileKeys.profileTables + ProfileKeys.profilesKnobs
        + AllowanceKeys.all

    /// The keys of one table, in declaration order.
    public static func keys(of section: SettingSection) -> [Setting] { all.filter { $0.section == section } }

    /// Every table's known keys by path, "" being the top level: a table's own keys, then the
    /// tables inside it (`lists` ends with `source`, `profile` with `knobs`).
    public static let schema: [String: [String]] = {
        var tables: [String: [String]] = ["": []]
        for section in SettingSection.allCases {
            tables[section.rawValue, default: []] += keys(of: section).map(\.key)
        }
        for section in SettingSection.allCases { tables[section.parent, default: []].append(section.key) }
        return tables
    }()

    /// The parts of the running helper a reload compares, each once, in declaration order.
    public static let reloadParts: [ReloadPart] = {
        var seen: Set<ObjectIdentifier> = []
        return all.map(\.reload).filter { seen.insert(ObjectIdentifier($0)).inserted }
    }()

    /// The embedded defaults as a TOML document: every key whose default is a plain value.
    /// `FileSections` reads it before the file, so a default is changed in its declaration.
    public static let defaultsDocument: String = {
        var out: [String] = []
        for section in SettingSection.allCases where !section.isArray {
            let lines = keys(of: section).compactMap { setting -> String? in
                guard case .value(let text) = setting.defaultValue else { return nil }
                return "\(setting.key) = \(text)"
            }
            guard !lines.isEmpty else { continue }
            out.append("[\(section.rawValue)]")
            out += lines
        }
        return out.joined(separator: "\n") + "\n"
    }()
}
