import Foundation

/// The reference section of docs/configuration.md, written from the declarations: every table and
/// key with its value, default, what is allowed, when a reload applies it and what it does.
/// `scrolloff-dns config reference --write docs/configuration.md` puts it between the markers;
/// ConfigurationReferenceTests fails when the committed document differs.
public enum ConfigurationReference {
    public static let begin = "<!-- BEGIN reference: generated from Sources/Config/Settings by `scrolloff-dns config reference --write docs/configuration.md`; do not edit by hand -->"
    public static let end = "<!-- END reference -->"
    public static let regenerate = "swift run scrolloff-dns config reference --write docs/configuration.md"

    /// The section's text, markers included.
    public static func markdown() -> String {
        var out = [begin, "## Reference", ""]
        out.append("Every key of `scrolloff.toml`, per table. *Reload* says whether `systemctl reload scrolloff-dns` applies a change "
            + "at once or it waits for the next restart, and under which name the reload's log line reports it.")
        for section in SettingSection.allCases {
            let keys = ConfigurationKeys.keys(of: section)
            guard !keys.isEmpty else { continue }
            out += ["", section.isArray ? "### `[[\(section.rawValue)]]`" : "### `[\(section.rawValue)]`", "", section.doc, ""]
            out.append("| key | value | default | allowed | reload | what it does |")
            out.append("|---|---|---|---|---|---|")
            for setting in keys {
                let cells = [
                    "`\(setting.key)`", setting.value.described, defaultCell(setting.defaultValue), setting.allowed,
                    reloadCell(setting.reload), setting.doc,
                ]
                out.append("| " + cells.map(escaped).joined(separator: " | ") + " |")
            }
        }
        out.append(end)
        return out.joined(separator: "\n")
    }

    /// `document` with the text between the markers (markers included) replaced by `markdown()`.
    public static func replacingSection(in document: String) throws(ReferenceError) -> String {
        guard let start = document.range(of: begin), let stop = document.range(of: end, range: start.upperBound..<document.endIndex) else {
            throw .markersMissing
        }
        return String(document[..<start.lowerBound]) + markdown() + String(document[stop.upperBound...])
    }

    /// The section as committed in `document`, markers included; nil without markers.
    public static func committedSection(in document: String) -> String? {
        guard let start = document.range(of: begin), let stop = document.range(of: end, range: start.upperBound..<document.endIndex) else {
            return nil
        }
        return String(document[start.lowerBound..<stop.upperBound])
    }

    static func defaultCell(_ value: SettingDefault) -> String {
        switch value {
        case .value(let text): "`\(text)`"
        case .derived(let shown, let meaning): "`\(shown)` (\(meaning))"
        case .preset: "the preset's"
        case .none(let words): words
        }
    }

    static func reloadCell(_ part: ReloadPart) -> String {
        switch part.timing {
        case .appliesAtOnce: "at once (`\(part.name)`)"
        case .needsRestart: "at restart (`\(part.name)`)"
        }
    }

    /// A table cell: `|` would end it, a line break would end the row.
    static func escaped(_ text: String) -> String {
        text.replacingOccurrences(of: "|", with: "\\|").replacingOccurrences(of: "\n", with: " ")
    }
}

/// Why the reference could not be written into a document.
public enum ReferenceError: Error, Sendable, Equatable, CustomStringConvertible {
    case markersMissing

    public var description: String {
        switch self {
        case .markersMissing:
            "the document has no reference markers; put the lines \(ConfigurationReference.begin) and \(ConfigurationReference.end) where the reference belongs"
        }
    }
}
