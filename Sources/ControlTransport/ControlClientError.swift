#if canImport(Glibc)
import Glibc
#elseif canImport(Darwin)
import Darwin
#endif
import ControlAPI
import Foundation

/// Why a call to the helper did not produce an answer, or the helper's refusal. Each message says
/// what to do next; the CLI maps them to the exit codes of SPEC §13.
public enum ControlClientError: Error, Sendable, Equatable, CustomStringConvertible {
    public enum UnreachableReason: Sendable, Equatable {
        /// No socket file: the helper is not running, or uses another path.
        case socketMissing
        /// A socket file without a listener: the helper stopped without cleaning up.
        case nobodyListening
    }

    case helperUnreachable(path: String, reason: UnreachableReason)
    /// The socket exists but this user may not connect (not in group `scrolloff`).
    case permissionDenied(path: String)
    case timedOut(path: String, seconds: Double)
    case socketPathInvalid(path: String, limit: Int)
    case io(path: String, operation: String, errno: Int32)
    case badAnswer(path: String, detail: String)
    /// The helper answered with an error body.
    case refused(status: Int, error: ControlError)
    /// The socket is served by a user other than root or the caller (nil: the kernel did not say).
    case untrustedServer(path: String, uid: UInt32?)

    /// Exit code per SPEC §13: 3 when the helper cannot be reached, 1 when it refused.
    public var exitCode: Int32 {
        switch self {
        case .helperUnreachable, .permissionDenied, .timedOut, .socketPathInvalid, .io, .badAnswer, .untrustedServer: return 3
        case .refused(let status, let error):
            // A request the helper could not parse, or one naming nothing that exists (a misspelt
            // entry, an unknown profile), is a usage error of the caller; a rule saying no is 1.
            if status == 400 { return 2 }
            if status == 404, error.code == ControlErrorCode.unknownName || error.code == ControlErrorCode.profileNotFound { return 2 }
            return 1
        }
    }

    static let closedBeforeAnswer = "the connection closed before an answer"

    package static func userName(_ uid: UInt32) -> String {
        guard let entry = getpwuid(uid), let name = entry.pointee.pw_name else { return "uid \(uid)" }
        return "user \(String(cString: name)) (uid \(uid))"
    }

    /// The helper closes a connection at once when its user already holds
    /// `helper.control_connections_per_user` of them, or all `helper.control_connections` are open.
    static let closedAtOnce = " It closes connections at once while your user holds too many (helper.control_connections_per_user) "
        + "or all are in use (helper.control_connections); its log says which. Try again in a few seconds."

    public var description: String {
        switch self {
        case .helperUnreachable(let path, let reason):
            let what = reason == .socketMissing
                ? "There is no helper socket at \(path)."
                : "Nothing answers on \(path); the helper seems to have stopped."
            return what + " Start the helper with `sudo systemctl start scrolloff-dns` (or `make run` "
                + "from the source tree), or point to its socket with --socket PATH or SCROLLOFF_SOCKET."
        case .permissionDenied(let path):
            return "You may not use the helper socket \(path). Members of group 'scrolloff' may: "
                + "`sudo usermod -aG scrolloff $USER`, then log in again."
        case .timedOut(let path, let seconds):
            return "The helper at \(path) did not answer within \(Int(seconds.rounded())) s. Check it with "
                + "`systemctl status scrolloff-dns` or its log."
        case .socketPathInvalid(let path, let limit):
            return "'\(path)' cannot be a socket path: it must be 1 to \(limit) bytes long. Use a shorter path."
        case .io(let path, let operation, let code):
            let text = "Could not \(operation) the helper at \(path): \(String(cString: strerror(code))) (errno \(code))."
            return code == EPIPE || code == ECONNRESET ? text + Self.closedAtOnce : text
        case .badAnswer(let path, let detail) where detail == Self.closedBeforeAnswer:
            return "The helper at \(path) closed the connection before answering." + Self.closedAtOnce
        case .badAnswer(let path, let detail):
            return "The helper at \(path) sent an answer this CLI cannot read (\(detail)). Are the CLI "
                + "and the helper the same version?"
        case .refused(_, let error):
            return error.message
        case .untrustedServer(let path, let uid):
            let who = uid.map { Self.userName($0) } ?? "a process whose user the kernel did not report"
            return "The socket \(path) is served by \(who), not by root or you, so it is not the helper: nothing was sent to it. "
                + "Someone may have put it there to read your commands. Check with `ls -la \((path as NSString).deletingLastPathComponent)` "
                + "and `sudo ss -xlp | grep \((path as NSString).lastPathComponent)`, remove it, and restart the helper with "
                + "`sudo systemctl restart scrolloff-dns`."
        }
    }
}
