import Logging
import ScrollOffCore
import Store

/// Something a module outside the rules saw that the event log keeps (SPEC §12): a hand edit of
/// the hosts file that hosts mode put back, bypass attempts the firewall caught. The module says
/// what it saw; the engine stamps it with the trusted clock and commits it (`HelperEngine.record`),
/// so those modules hand the engine a value instead of extending it.
package protocol ObservedEvent: Sendable {
    /// Nothing to record: the engine does not read the clock or commit for it.
    var isEmpty: Bool { get }
    /// Writes its log line, when the engine records it.
    func log(to logger: Logger)
    /// Its rows, stamped with the trusted time `now` of the commit that writes them.
    func storedEvents(at now: Instant) -> [StoredEvent]
}

extension ObservedEvent {
    package var isEmpty: Bool { false }
}
