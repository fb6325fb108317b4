import Engine
import Logging
import ScrollOffCore
import Store

/// A hand edit of the hosts-file section that hosts mode put back, as the tamper event the engine
/// records (SPEC §10, §11; `HelperEngine.record`).
package struct HostsEditEvent: ObservedEvent {
    package var edit: HostsSectionEdit

    package init(_ edit: HostsSectionEdit) { self.edit = edit }

    package func log(to logger: Logger) {
        logger.warning("hosts file changed outside Scroll Off: section put back", metadata: [
            "hosts.file": "\(edit.file)", "hosts.lines_removed": "\(edit.linesRemoved)", "hosts.lines_added": "\(edit.linesAdded)",
            "hosts.section_removed": "\(edit.sectionRemoved)", "hosts.moved": "\(edit.moved)",
        ])
    }

    package func storedEvents(at now: Instant) -> [StoredEvent] { [StoredEvent(edit, at: now)] }
}
