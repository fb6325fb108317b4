import ControlAPI
import HostsFile
import Foundation
import ScrollOffCore
import Synchronization

/// How hosts mode is doing, for `doctor` (SPEC §10): written by ``HostsModeService`` after every
/// check, read by the control server.
package final class HostsModeStatus: Sendable {
    private let state: Mutex<DoctorHostsFacts>

    package init(path: String, dnsToo: Bool) {
        state = Mutex(DoctorHostsFacts(path: path, dnsToo: dnsToo))
    }

    package var facts: DoctorHostsFacts { state.withLock { $0 } }

    func succeeded(names: Int, userLines: [HostsUserLine] = [], strictCurfew: Bool = false, strictCurfewInForce: Bool = false) {
        state.withLock { f in
            f.names = names
            f.userLines = userLines.map { DoctorHostsLine(number: $0.number, text: $0.text, names: $0.names) }
            f.strictCurfew = strictCurfew
            f.strictCurfewInForce = strictCurfewInForce
            f.failingSince = nil
            f.attempts = 0
            f.error = nil
            f.fix = nil
        }
    }

    /// A hand edit of the section was put back at `time`.
    func restored(at time: Instant) {
        state.withLock { f in
            f.restoredEdits += 1
            f.lastRestored = time.date
        }
    }

    func failing(since: Instant, attempts: Int, error: String, fix: String? = nil) {
        state.withLock { f in
            f.failingSince = since.date
            f.attempts = attempts
            f.error = error
            f.fix = fix
        }
    }
}
