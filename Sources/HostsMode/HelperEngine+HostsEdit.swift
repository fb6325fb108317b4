import Engine
import Logging
import Store

extension HelperEngine {
    /// Records a hand edit of the hosts-file section that hosts mode put back, as a tamper event
    /// (SPEC §10, §11), in its own small commit. When the disk refuses it, it is held for the next
    /// commit like any other event, so a full disk loses no record of tampering.
    package func recordHostsEdit(_ edit: HostsSectionEdit) {
        let now = advanceClock()
        logger.warning("hosts file changed outside Scroll Off: section put back", metadata: [
            "hosts.file": "\(edit.file)", "hosts.lines_removed": "\(edit.linesRemoved)", "hosts.lines_added": "\(edit.linesAdded)",
            "hosts.section_removed": "\(edit.sectionRemoved)", "hosts.moved": "\(edit.moved)",
        ])
        var change = StateChange([.appendEvent(StoredEvent(edit, at: now))])
        var work = profiles
        do {
            try commit(&change, profiles: &work, now: now)
        } catch {
            hold(change, profiles: work, now: now)
        }
    }
}
