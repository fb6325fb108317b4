import Foundation

/// What `doctor` learns about hosts mode (SPEC §10) from the helper: nil in `--mode dns`.
public struct DoctorHostsFacts: Codable, Sendable, Equatable {
    /// The hosts file kept.
    public var path: String
    /// `--mode both`: the sinkhole answers too, so its checks apply as well.
    public var dnsToo: Bool
    /// Names in the section at the last good check; nil before the first check.
    public var names: Int?
    /// Since when writes fail, how often they were tried and the last error; nil while they succeed.
    public var failingSince: Date?
    public var attempts: Int
    public var error: String?
    /// What to do about `error`, from the helper that met it (a symbolic link in the file's place,
    /// `chattr +i`); nil when `doctor` words the fix itself.
    public var fix: String?
    /// Lines of the user's own, outside the section, that give a blocked name a real address.
    public var userLines: [DoctorHostsLine]
    /// Hand edits of the section put back since the helper started, and the latest one.
    public var restoredEdits: Int
    public var lastRestored: Date?
    /// The default profile has a strict curfew (in force now, or one that will start).
    public var strictCurfew: Bool
    /// It is in force now: the section lists every name of every list.
    public var strictCurfewInForce: Bool

    public init(path: String, dnsToo: Bool, names: Int? = nil, failingSince: Date? = nil, attempts: Int = 0, error: String? = nil,
                fix: String? = nil, userLines: [DoctorHostsLine] = [], restoredEdits: Int = 0, lastRestored: Date? = nil,
                strictCurfew: Bool = false, strictCurfewInForce: Bool = false) {
        self.path = path
        self.dnsToo = dnsToo
        self.names = names
        self.failingSince = failingSince
        self.attempts = attempts
        self.error = error
        self.fix = fix
        self.userLines = userLines
        self.restoredEdits = restoredEdits
        self.lastRestored = lastRestored
        self.strictCurfew = strictCurfew
        self.strictCurfewInForce = strictCurfewInForce
    }

    enum CodingKeys: String, CodingKey {
        case path, dnsToo = "dns_too", names, failingSince = "failing_since", attempts, error, fix, userLines = "user_lines"
        case restoredEdits = "restored_edits", lastRestored = "last_restored", strictCurfew = "strict_curfew"
        case strictCurfewInForce = "strict_curfew_in_force"
    }

    public init(from decoder: any Decoder) throws {
        let c = try decoder.container(keyedBy: CodingKeys.self)
        path = try c.decode(String.self, forKey: .path)
        dnsToo = try c.decode(Bool.self, forKey: .dnsToo)
        names = try c.decodeIfPresent(Int.self, forKey: .names)
        failingSince = try c.decodeIfPresent(Date.self, forKey: .failingSince)
        attempts = try c.decodeIfPresent(Int.self, forKey: .attempts) ?? 0
        error = try c.decodeIfPresent(String.self, forKey: .error)
        fix = try c.decodeIfPresent(String.self, forKey: .fix)
        // An older helper sends none of these: nothing found, nothing to warn about.
        userLines = try c.decodeIfPresent([DoctorHostsLine].self, forKey: .userLines) ?? []
        restoredEdits = try c.decodeIfPresent(Int.self, forKey: .restoredEdits) ?? 0
        lastRestored = try c.decodeIfPresent(Date.self, forKey: .lastRestored)
        strictCurfew = try c.decodeIfPresent(Bool.self, forKey: .strictCurfew) ?? false
        strictCurfewInForce = try c.decodeIfPresent(Bool.self, forKey: .strictCurfewInForce) ?? false
    }
}

/// A line of the user's own in the hosts file that opens a blocked name.
public struct DoctorHostsLine: Codable, Sendable, Equatable {
    public var number: Int
    public var text: String
    public var names: [String]

    public init(number: Int, text: String, names: [String]) {
        self.number = number
        self.text = text
        self.names = names
    }
}
