import ControlAPI
import Foundation
import ScrollOffCore
import Synchronization

/// How hosts mode is doing, for `doctor` (SPEC §10): written by ``HostsModeService`` after every
/// check, read by the control server.
final class HostsModeStatus: Sendable {
    private let state: Mutex<DoctorHostsFacts>

    init(path: String, dnsToo: Bool) {
        state = Mutex(DoctorHostsFacts(path: path, dnsToo: dnsToo))
    }

    var facts: DoctorHostsFacts { state.withLock { $0 } }

    func succeeded(names: Int) {
        state.withLock { f in
            f.names = names
            f.failingSince = nil
            f.attempts = 0
            f.error = nil
        }
    }

    func failing(since: Instant, attempts: Int, error: String) {
        state.withLock { f in
            f.failingSince = since.date
            f.attempts = attempts
            f.error = error
        }
    }
}
