import ControlAPI

/// `scrolloff doctor --json`: every check and whether all passed.
public struct DoctorReport: Codable, Sendable, Equatable {
    public var ok: Bool
    public var checks: [DoctorCheck]

    public init(checks: [DoctorCheck]) {
        self.checks = checks
        ok = checks.allSatisfy { $0.status != .fail }
    }
}

/// One line of `scrolloff doctor`.
public struct DoctorCheck: Codable, Sendable, Equatable {
    public enum Status: String, Codable, Sendable {
        /// `warn`: nothing to fix, but a limit the person should know about (it does not fail `doctor`).
        case pass, warn, fail
    }

    /// Stable machine name: `helper`, `listeners`, `resolver`, `blocked_probe`, `normal_probe`,
    /// `lists` or `list:NAME`, `canary`, `clock`, `database`.
    public var name: String
    public var status: Status
    /// What was found, numbers first.
    public var detail: String
    /// One line saying exactly what to run or change; nil when the check passed.
    public var fix: String?

    public init(name: String, status: Status, detail: String, fix: String? = nil) {
        self.name = name
        self.status = status
        self.detail = detail
        self.fix = fix
    }

    public static func pass(_ name: String, _ detail: String) -> DoctorCheck { DoctorCheck(name: name, status: .pass, detail: detail) }
    public static func warn(_ name: String, _ detail: String, fix: String) -> DoctorCheck {
        DoctorCheck(name: name, status: .warn, detail: detail, fix: fix)
    }
    public static func fail(_ name: String, _ detail: String, fix: String) -> DoctorCheck {
        DoctorCheck(name: name, status: .fail, detail: detail, fix: fix)
    }

    enum CodingKeys: String, CodingKey {
        case name, status, detail, fix
    }

    public func encode(to encoder: any Encoder) throws {
        var c = encoder.container(keyedBy: CodingKeys.self)
        try c.encode(name, forKey: .name)
        try c.encode(status, forKey: .status)
        try c.encode(detail, forKey: .detail)
        try c.encode(fix, forKey: .fix)
    }
}
