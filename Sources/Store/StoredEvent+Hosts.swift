import Foundation
import ScrollOffCore

/// SPEC §10, §11: someone changed the managed section of the hosts file while the rules said it
/// should be there, and the helper put it back. Stored as a tamper event, machine-wide.
public struct HostsSectionEdit: Hashable, Sendable, Codable {
    /// Tells this tamper event's payload from a clock jump's.
    public var source = "hostsFile"
    public var file: String
    /// Lines of the section that were gone, and lines found in it that Scroll Off did not write.
    public var linesRemoved: Int
    public var linesAdded: Int
    /// The whole section was gone.
    public var sectionRemoved: Bool
    /// Only its place changed: it was moved below other lines.
    public var moved: Bool

    public init(file: String, linesRemoved: Int, linesAdded: Int, sectionRemoved: Bool, moved: Bool) {
        self.file = file
        self.linesRemoved = linesRemoved
        self.linesAdded = linesAdded
        self.sectionRemoved = sectionRemoved
        self.moved = moved
    }

    /// The sentence `scrolloff events` shows.
    public var message: String {
        let what: String
        if sectionRemoved {
            what = "was taken out"
        } else if linesRemoved == 0, linesAdded == 0 {
            what = moved ? "was moved below other lines" : "was changed"
        } else {
            var parts: [String] = []
            if linesRemoved > 0 { parts.append("\(linesRemoved) \(linesRemoved == 1 ? "line" : "lines") taken out") }
            if linesAdded > 0 { parts.append("\(linesAdded) \(linesAdded == 1 ? "line" : "lines") added") }
            what = "was edited (\(parts.joined(separator: ", ")))"
        }
        return "The scrolloff section of \(file) \(what) outside Scroll Off; it was put back as the rules say."
    }
}

extension StoredEvent {
    /// A hand edit of the hosts-file section that the helper undid (SPEC §10 "restored if someone edits it").
    public init(_ edit: HostsSectionEdit, at time: Instant) {
        self.init(profile: nil, time: time, kind: .tamper, message: edit.message, payload: JSONCoding.string(edit))
    }

    /// Whether this is a tamper event about the clock (SPEC §11), as opposed to one about the hosts file.
    public var isClockJump: Bool {
        guard kind == .tamper, let payload else { return false }
        return (try? JSONDecoder().decode(ClockJump.self, from: Data(payload.utf8))) != nil
    }
}
