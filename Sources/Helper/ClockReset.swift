#if canImport(Glibc)
import Config
import Glibc
#endif
import Foundation
import ScrollOffCore
import Store

/// `scrolloff-dns clock reset` (SPEC §11 clock recovery): root sets the trusted clock to the
/// system clock, for a trusted clock left ahead by a start with a wrong wall clock when no NTP
/// is there to bring it back. It writes the saved anchor while the helper is stopped (the state
/// folder's lock proves it is), with a tamper event saying root did it; the next start takes the
/// anchor, and the engine cuts whatever the wallets hold on the old clock (`Wallet.rewind`).
public enum ClockReset {
    public struct Outcome: Sendable {
        /// What the trusted clock would have read now, before the reset.
        public var before: Instant
        /// The system clock the trusted clock now reads.
        public var after: Instant
    }

    public static func run(stateDirectory: String, timeSource: any TimeSource = SystemTimeSource(),
                           buildDate: Instant = BuildInfo.date) throws(ClockResetError) -> Outcome {
        // The folder's owner is who may: root, or the user a `make run` helper runs as. The
        // database is root's 0600 anyway; this says so before anything is opened.
        var info = stat()
        guard stat(stateDirectory, &info) == 0 else { throw .noState(stateDirectory) }
        guard geteuid() == 0 || info.st_uid == geteuid() else { throw .notRoot }
        do { try FolderTrust.check(stateDirectory, role: .state) } catch { throw .unsafeFolder(error.description) }
        let database = (stateDirectory as NSString).appendingPathComponent("scrolloff.sqlite")
        guard FileManager.default.fileExists(atPath: database) else { throw .noState(stateDirectory) }
        let lock: StateFolderLock
        do { lock = try StateFolderLock.acquire(stateDirectory: stateDirectory) } catch {
            if case .heldByAnother(_, let pid) = error { throw .helperRunning(folder: stateDirectory, pid: pid) }
            throw .store(error.description)
        }
        defer { lock.release() }
        let reading = timeSource.read()
        guard reading.wall >= buildDate else { throw .wallBeforeBuild(wall: reading.wall, build: buildDate) }
        do {
            let store = try Store(directory: stateDirectory)
            let anchor = try store.load().anchor
            let before = TrustedClock(anchor: anchor, buildDate: buildDate, reading: reading).now
            let jump = ClockJump(direction: reading.wall < before ? .back : .forward, wall: reading.wall, trusted: reading.wall,
                                 offset: reading.wall - before, correction: .rootReset)
            var change = StateChange()
            change.append(.appendEvent(StoredEvent(jump)))
            _ = try store.commit(change, anchor: ClockAnchor(trusted: reading.wall, bootNanoseconds: reading.bootNanoseconds, bootID: reading.bootID))
            return Outcome(before: before, after: reading.wall)
        } catch {
            throw .store("\(error)")
        }
    }
}

public enum ClockResetError: Error, Equatable, CustomStringConvertible {
    case notRoot
    case noState(String)
    case unsafeFolder(String)
    case helperRunning(folder: String, pid: Int32?)
    case wallBeforeBuild(wall: Instant, build: Instant)
    case store(String)

    public var description: String {
        switch self {
        case .notRoot:
            return "Only root may reset the helper's trusted clock: run `sudo scrolloff-dns clock reset`. "
                + "(A member cannot move the trusted clock back; NTP-synchronised time moves it back by itself.)"
        case .noState(let folder):
            return "\(folder) holds no helper database, so there is no trusted clock to reset. Name the helper's folder with --state-dir or --config."
        case .unsafeFolder(let text):
            return text
        case .helperRunning(let folder, let pid):
            return "The helper\(pid.map { " (pid \($0))" } ?? "") is running on \(folder) and keeps its clock in memory. "
                + "Stop it first: `sudo systemctl stop scrolloff-dns && sudo scrolloff-dns clock reset && sudo systemctl start scrolloff-dns`."
        case .wallBeforeBuild(let wall, let build):
            return "The system clock reads \(wall.date), before this build was made (\(build.date)), so it cannot be right. "
                + "Set it first (`sudo timedatectl set-ntp true`, or `sudo date -s …`), then run `sudo scrolloff-dns clock reset` again."
        case .store(let text):
            return "Could not reset the trusted clock: \(text)"
        }
    }
}
