import GRDB
import ScrollOffCore

/// Grants and the wallet and ladder rows of one profile.
extension ChangeWriter {
    func saveGrant(profile: String, _ g: Grant, ended: StateChange.GrantEnd?) throws {
        try db.execute(sql: """
            INSERT INTO grants (profile, id, entry, kind, start, "end", task, ended_at, end_reason) VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?)
            ON CONFLICT (profile, id) DO UPDATE SET entry = excluded.entry, kind = excluded.kind, start = excluded.start,
            "end" = excluded."end", task = excluded.task, ended_at = excluded.ended_at, end_reason = excluded.end_reason
            """, arguments: [profile, g.id, g.entry.rawValue, g.kind.rawValue, g.start.millisecondsSince1970, g.end.millisecondsSince1970,
                             g.task, ended?.at.millisecondsSince1970, ended?.reason])
    }

    /// Replaces the profile's wallet and ladder rows with `account`. The grants it has in use are
    /// the open ones; a grant still open in the table but not in use any more closed at its end.
    func saveAccount(profile: String, _ account: CreditAccountState) throws {
        let w = account.wallet
        let spend = w.spend
        try db.execute(sql: """
            INSERT OR REPLACE INTO wallet_state (profile, as_of, starter_granted, block_in_force, streak_start, frozen_until,
            spend_grant_id, spend_entry, spend_settled_through, spend_limit_end, uncharged_ms, next_grant_id, day,
            earned_today, spent_today, spent_today_by_entry, allowance_day, allowance_granted)
            VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?)
            """, arguments: [
                profile, w.asOf.millisecondsSince1970, w.starterGranted, w.blockInForce, w.streakStart?.millisecondsSince1970,
                w.frozenUntil?.millisecondsSince1970, spend?.grantID, spend?.entry.rawValue,
                spend?.settledThrough.millisecondsSince1970, spend?.limitEnd?.millisecondsSince1970, w.unchargedMilliseconds,
                w.nextGrantID, w.day.map(Columns.day), w.earnedToday, w.spentToday,
                JSONCoding.string(Dictionary(uniqueKeysWithValues: w.spentTodayByEntry.map { ($0.key.rawValue, $0.value) })),
                w.allowanceDay.map(Columns.day), JSONCoding.string(w.allowanceGranted),
            ])
        try db.execute(sql: "DELETE FROM wallet_batches WHERE profile = ?", arguments: [profile])
        for (position, b) in w.batches.enumerated() {
            let origin = Columns.origin(b.origin)
            try db.execute(sql: """
                INSERT INTO wallet_batches (profile, position, origin, earned_day, created_at, expires_at, remaining, earmark, allowance_key)
                VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?)
                """, arguments: [profile, position, origin.origin, origin.day, b.createdAt.millisecondsSince1970,
                                 b.expiresAt?.millisecondsSince1970, b.remaining, b.earmark?.rawValue, b.allowanceKey])
        }
        let inUse = w.grantsInUse.map(\.id)
        try db.execute(sql: """
            UPDATE grants SET ended_at = "end", end_reason = COALESCE(end_reason, 'elapsed')
            WHERE profile = ? AND ended_at IS NULL AND id NOT IN (SELECT value FROM json_each(?))
            """, arguments: [profile, JSONCoding.string(inUse)])
        for g in w.grantsInUse { try saveGrant(profile: profile, g, ended: nil) }

        let l = account.ladder
        if let day = l.day {
            try db.execute(sql: "INSERT OR REPLACE INTO peeks (profile, day, free_used, paid_used) VALUES (?, ?, ?, ?)",
                           arguments: [profile, Columns.day(day), l.freePeeksUsed, l.paidPeeksUsed])
        }
        if let month = l.month {
            try db.execute(sql: "INSERT OR REPLACE INTO token_months (profile, month, used) VALUES (?, ?, ?)",
                           arguments: [profile, Columns.month(month), l.tokensUsed])
        }
        try db.execute(sql: "DELETE FROM bypass_lockouts WHERE profile = ?", arguments: [profile])
        for (entry, until) in l.lockedUntil {
            try db.execute(sql: "INSERT INTO bypass_lockouts (profile, entry, until) VALUES (?, ?, ?)",
                           arguments: [profile, entry.rawValue, until.millisecondsSince1970])
        }
    }
}
