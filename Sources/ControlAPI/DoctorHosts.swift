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

    public init(path: String, dnsToo: Bool, names: Int? = nil, failingSince: Date? = nil, attempts: Int = 0, error: String? = nil) {
        self.path = path
        self.dnsToo = dnsToo
        self.names = names
        self.failingSince = failingSince
        self.attempts = attempts
        self.error = error
    }

    enum CodingKeys: String, CodingKey {
        case path, dnsToo = "dns_too", names, failingSince = "failing_since", attempts, error
    }
}

extension DoctorVerdicts {
    /// The hosts-file section: kept up to date, or why not and what to do.
    public static func hosts(_ facts: DoctorHostsFacts, now: Date) -> DoctorCheck {
        if let since = facts.failingSince {
            let seconds = max(0, Int(now.timeIntervalSince(since)))
            let error = facts.error ?? "unknown error"
            let fix: String
            if error.contains("is damaged") {
                fix = "Edit \(facts.path) so that one '# BEGIN scrolloff' line is followed by one '# END scrolloff' line "
                    + "(or delete both markers and the lines between); the helper takes over again within seconds."
            } else if error.contains("read-only") || error.contains("permission denied") {
                fix = "Hosts mode needs \(facts.path)'s folder writable: add ReadWritePaths=/etc to the unit "
                    + "(`sudo systemctl edit scrolloff-dns`), then restart it."
            } else {
                fix = "Read the helper's log: `journalctl -u scrolloff-dns -n 50`; it retries on its own."
            }
            return .fail("hosts", "cannot update \(facts.path) for \(seconds) s (\(facts.attempts) attempts): \(error)", fix: fix)
        }
        guard let names = facts.names else {
            return .fail("hosts", "\(facts.path) not checked yet", fix: "Wait a second and run `scrolloff doctor` again.")
        }
        return .pass("hosts", names == 0
            ? "\(facts.path) is up to date: nothing blocked now, so no scrolloff section"
            : "\(facts.path) is up to date: \(names) \(names == 1 ? "name" : "names") in the scrolloff section")
    }
}
