import Foundation

/// The process on the other end of the control socket, as the kernel reports it (SO_PEERCRED).
public struct CallerIdentity: Codable, Sendable, Equatable {
    public var uid: UInt32
    public var gid: UInt32
    public var pid: Int32

    public init(uid: UInt32, gid: UInt32, pid: Int32) {
        self.uid = uid
        self.gid = gid
        self.pid = pid
    }
}

/// `GET /v1/health`: whether the helper is alive, which build answers, and who asked.
public struct HealthResponse: Codable, Sendable, Equatable {
    public var status: String
    public var version: String
    public var pid: Int32
    public var uptimeSeconds: Int64
    /// The helper's trusted clock (SPEC §11) at the time of the answer; the CLI renders "3 min ago"
    /// against this, never against its own clock.
    public var now: Date
    /// The caller as the helper saw it, so `curl` users can check which uid they are acting as.
    public var caller: CallerIdentity

    public init(status: String = "ok", version: String, pid: Int32, uptimeSeconds: Int64, now: Date, caller: CallerIdentity) {
        self.status = status
        self.version = version
        self.pid = pid
        self.uptimeSeconds = uptimeSeconds
        self.now = now
        self.caller = caller
    }

    enum CodingKeys: String, CodingKey {
        case status, version, pid, now, caller
        case uptimeSeconds = "uptime_seconds"
    }
}
