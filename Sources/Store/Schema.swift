import GRDB

/// The schema as a list of named GRDB migrations, one per step, applied in order.
///
/// Conventions: instants are INTEGER milliseconds since 1970 (the core's `Instant`), lengths are
/// INTEGER whole seconds, local days are TEXT `YYYY-MM-DD` and months `YYYY-MM` in the profile's
/// zone, lists are JSON arrays. Every profile-owned table references `profiles(name)` so a row
/// can never belong to a profile that does not exist. Never edit a shipped migration: add a step.
enum Schema {
    static var migrator: DatabaseMigrator {
        var m = DatabaseMigrator()
        for (name, sql) in steps {
            m.registerMigration(name) { db in try db.execute(sql: sql) }
        }
        return m
    }

    /// Identifiers in order; `newerSchema` names the ones found in a file but missing here.
    static var identifiers: [String] { steps.map(\.0) }

    static let steps: [(String, String)] = [
        ("v1 profiles and entries", """
        CREATE TABLE profiles (
            name TEXT PRIMARY KEY NOT NULL CHECK (length(name) > 0),
            client_cidrs TEXT NOT NULL DEFAULT '[]',
            time_zone TEXT NOT NULL,
            preset TEXT NOT NULL CHECK (preset IN ('strict', 'balanced', 'flexible')),
            knob_overrides TEXT NOT NULL DEFAULT '{}',
            owner_uids TEXT NOT NULL DEFAULT '[]'
        ) STRICT;
        CREATE TABLE entries (
            profile TEXT NOT NULL REFERENCES profiles(name) ON DELETE CASCADE,
            id TEXT NOT NULL,
            kind TEXT NOT NULL CHECK (kind IN ('service', 'domain')),
            added INTEGER NOT NULL,
            PRIMARY KEY (profile, id)
        ) STRICT;
        """),
        ("v1 blocks, schedules and focus sessions", """
        CREATE TABLE blocks (
            profile TEXT NOT NULL REFERENCES profiles(name) ON DELETE CASCADE,
            entry TEXT NOT NULL,
            created INTEGER NOT NULL,
            cooldown_until INTEGER NOT NULL,
            reason TEXT,
            PRIMARY KEY (profile, entry)
        ) STRICT;
        CREATE TABLE schedules (
            profile TEXT NOT NULL REFERENCES profiles(name) ON DELETE CASCADE,
            name TEXT NOT NULL,
            start_minute INTEGER NOT NULL CHECK (start_minute BETWEEN 0 AND 1439),
            end_minute INTEGER NOT NULL CHECK (end_minute BETWEEN 0 AND 1439),
            days INTEGER NOT NULL CHECK (days BETWEEN 1 AND 127),
            time_zone TEXT NOT NULL,
            kind TEXT NOT NULL CHECK (kind IN ('block', 'curfew')),
            strict INTEGER NOT NULL DEFAULT 0 CHECK (strict IN (0, 1) AND (strict = 0 OR kind = 'curfew')),
            entries TEXT NOT NULL DEFAULT '[]',
            reason TEXT,
            enabled INTEGER NOT NULL CHECK (enabled IN (0, 1)),
            cooldown_until INTEGER,
            PRIMARY KEY (profile, name)
        ) STRICT;
        CREATE TABLE focus_sessions (
            profile TEXT NOT NULL REFERENCES profiles(name) ON DELETE CASCADE,
            id INTEGER NOT NULL,
            entries TEXT NOT NULL,
            start INTEGER NOT NULL,
            "end" INTEGER NOT NULL CHECK ("end" > start),
            reason TEXT,
            PRIMARY KEY (profile, id)
        ) STRICT;
        """),
        ("v1 ledger, grants and wallet", """
        CREATE TABLE ledger (
            id INTEGER PRIMARY KEY AUTOINCREMENT,
            profile TEXT NOT NULL REFERENCES profiles(name) ON DELETE CASCADE,
            time INTEGER NOT NULL,
            delta_seconds INTEGER NOT NULL,
            reason TEXT NOT NULL CHECK (reason IN ('earn', 'spend', 'bypassFree', 'bypassCredit', 'bypassToken',
                                                    'adjust', 'starter', 'expire', 'capDiscard')),
            entry TEXT,
            note TEXT
        ) STRICT;
        CREATE INDEX ledger_profile_time ON ledger(profile, time);
        CREATE TABLE grants (
            profile TEXT NOT NULL REFERENCES profiles(name) ON DELETE CASCADE,
            id INTEGER NOT NULL,
            entry TEXT NOT NULL,
            kind TEXT NOT NULL CHECK (kind IN ('spend', 'peek', 'token')),
            start INTEGER NOT NULL,
            "end" INTEGER NOT NULL CHECK ("end" >= start),
            task TEXT,
            ended_at INTEGER,
            end_reason TEXT,
            PRIMARY KEY (profile, id)
        ) STRICT;
        CREATE INDEX grants_open ON grants(profile) WHERE ended_at IS NULL;
        CREATE TABLE wallet_state (
            profile TEXT PRIMARY KEY NOT NULL REFERENCES profiles(name) ON DELETE CASCADE,
            as_of INTEGER NOT NULL,
            starter_granted INTEGER NOT NULL CHECK (starter_granted IN (0, 1)),
            block_in_force INTEGER NOT NULL CHECK (block_in_force IN (0, 1)),
            streak_start INTEGER,
            frozen_until INTEGER,
            spend_grant_id INTEGER,
            spend_entry TEXT,
            spend_settled_through INTEGER,
            spend_limit_end INTEGER,
            uncharged_ms INTEGER NOT NULL CHECK (uncharged_ms BETWEEN 0 AND 999),
            next_grant_id INTEGER NOT NULL,
            day TEXT,
            earned_today INTEGER NOT NULL,
            spent_today INTEGER NOT NULL,
            spent_today_by_entry TEXT NOT NULL DEFAULT '{}',
            CHECK ((spend_grant_id IS NULL) = (spend_entry IS NULL) AND (spend_entry IS NULL) = (spend_settled_through IS NULL))
        ) STRICT;
        CREATE TABLE wallet_batches (
            profile TEXT NOT NULL REFERENCES profiles(name) ON DELETE CASCADE,
            position INTEGER NOT NULL,
            origin TEXT NOT NULL CHECK (origin IN ('earned', 'starter', 'adjustment')),
            earned_day TEXT CHECK ((origin = 'earned') = (earned_day IS NOT NULL)),
            created_at INTEGER NOT NULL,
            expires_at INTEGER,
            remaining INTEGER NOT NULL CHECK (remaining > 0),
            earmark TEXT,
            PRIMARY KEY (profile, position)
        ) STRICT;
        """),
        ("v1 bypass ladder", """
        CREATE TABLE peeks (
            profile TEXT NOT NULL REFERENCES profiles(name) ON DELETE CASCADE,
            day TEXT NOT NULL,
            free_used INTEGER NOT NULL CHECK (free_used >= 0),
            paid_used INTEGER NOT NULL CHECK (paid_used >= 0),
            PRIMARY KEY (profile, day)
        ) STRICT;
        CREATE TABLE token_months (
            profile TEXT NOT NULL REFERENCES profiles(name) ON DELETE CASCADE,
            month TEXT NOT NULL,
            used INTEGER NOT NULL CHECK (used BETWEEN 0 AND 5),
            PRIMARY KEY (profile, month)
        ) STRICT;
        CREATE TABLE bypass_lockouts (
            profile TEXT NOT NULL REFERENCES profiles(name) ON DELETE CASCADE,
            entry TEXT NOT NULL,
            until INTEGER NOT NULL,
            PRIMARY KEY (profile, entry)
        ) STRICT;
        """),
        ("v1 plans, alternatives and exercises", """
        CREATE TABLE plans (
            id INTEGER PRIMARY KEY AUTOINCREMENT,
            profile TEXT NOT NULL REFERENCES profiles(name) ON DELETE CASCADE,
            when_text TEXT NOT NULL,
            then_text TEXT NOT NULL,
            created INTEGER NOT NULL,
            archived INTEGER NOT NULL DEFAULT 0 CHECK (archived IN (0, 1)),
            shown_count INTEGER NOT NULL DEFAULT 0 CHECK (shown_count >= 0)
        ) STRICT;
        CREATE TABLE alternatives (
            id INTEGER PRIMARY KEY AUTOINCREMENT,
            profile TEXT NOT NULL REFERENCES profiles(name) ON DELETE CASCADE,
            text TEXT NOT NULL,
            created INTEGER NOT NULL
        ) STRICT;
        CREATE TABLE exercise_sessions (
            id INTEGER PRIMARY KEY AUTOINCREMENT,
            profile TEXT NOT NULL REFERENCES profiles(name) ON DELETE CASCADE,
            time INTEGER NOT NULL,
            exercise_id TEXT NOT NULL,
            entry TEXT NOT NULL,
            outcome TEXT NOT NULL CHECK (outcome IN ('completed', 'skipped', 'bypassAvoided'))
        ) STRICT;
        """),
        ("v1 list sources", """
        CREATE TABLE list_sources (
            name TEXT PRIMARY KEY NOT NULL,
            url TEXT NOT NULL,
            added INTEGER NOT NULL,
            enabled INTEGER NOT NULL CHECK (enabled IN (0, 1))
        ) STRICT;
        """),
        ("v1 events", """
        CREATE TABLE events (
            id INTEGER PRIMARY KEY AUTOINCREMENT,
            profile TEXT REFERENCES profiles(name) ON DELETE CASCADE,
            time INTEGER NOT NULL,
            kind TEXT NOT NULL,
            entry TEXT,
            client_ip TEXT,
            message TEXT,
            payload TEXT
        ) STRICT;
        CREATE INDEX events_time ON events(time);
        CREATE INDEX events_profile_kind_time ON events(profile, kind, time);
        """),
        ("v1 daily rollups", """
        CREATE TABLE daily_rollups (
            profile TEXT NOT NULL REFERENCES profiles(name) ON DELETE CASCADE,
            day TEXT NOT NULL,
            urges INTEGER NOT NULL DEFAULT 0,
            resisted INTEGER NOT NULL DEFAULT 0,
            protected_seconds INTEGER NOT NULL DEFAULT 0,
            open_seconds INTEGER NOT NULL DEFAULT 0,
            spent_seconds INTEGER NOT NULL DEFAULT 0,
            earned_seconds INTEGER NOT NULL DEFAULT 0,
            peeks INTEGER NOT NULL DEFAULT 0,
            tokens INTEGER NOT NULL DEFAULT 0,
            ledger_delta_seconds INTEGER NOT NULL DEFAULT 0,
            rolled_up INTEGER NOT NULL DEFAULT 0 CHECK (rolled_up IN (0, 1)),
            PRIMARY KEY (profile, day)
        ) STRICT;
        """),
        ("v1 clock anchor", """
        CREATE TABLE clock_anchor (
            id INTEGER PRIMARY KEY CHECK (id = 1),
            trusted INTEGER NOT NULL,
            boot_ns INTEGER NOT NULL,
            boot_id TEXT NOT NULL
        ) STRICT;
        """),
        // The downloaded lists are kept by the helper's ListsController (metadata files beside
        // each copy), never in SQLite; the table "v1 list sources" made was never read.
        ("v2 drop list sources", """
        DROP TABLE IF EXISTS list_sources;
        """),
        // SPEC §11: a profile's members (view, spend, ask) apart from its owners (edit, grant),
        // members' requests for time, answered by an owner, and settings the helper must keep
        // across restarts to check the next change against (`unknown_devices`). A request outlives a restart; an
        // approval writes an `adjust` ledger row in the same transaction as the answer.
        ("v3 household members and time requests", """
        ALTER TABLE profiles ADD COLUMN member_uids TEXT NOT NULL DEFAULT '[]';
        CREATE TABLE time_requests (
            id INTEGER PRIMARY KEY AUTOINCREMENT,
            profile TEXT NOT NULL REFERENCES profiles(name) ON DELETE CASCADE,
            seconds INTEGER NOT NULL CHECK (seconds > 0),
            note TEXT NOT NULL,
            created INTEGER NOT NULL,
            status TEXT NOT NULL CHECK (status IN ('pending', 'approved', 'declined')),
            answered_at INTEGER,
            answered_by TEXT,
            answer_note TEXT,
            CHECK ((status = 'pending') = (answered_at IS NULL))
        ) STRICT;
        CREATE INDEX time_requests_profile ON time_requests(profile, status);
        CREATE TABLE helper_settings (
            key TEXT PRIMARY KEY NOT NULL,
            value TEXT NOT NULL
        ) STRICT;
        """),
        // What the SPEC §7 heatmap and top entries need per day, kept after the 90-day
        // purge (SPEC §12) beside `daily_rollups`; and the once-only marks of milestones and weekly
        // digests (their events are purged after 90 days, the marks are not, so none is written twice).
        ("v-insights-1 hour and entry rollups, insight marks", """
        CREATE TABLE daily_rollup_hours (
            profile TEXT NOT NULL REFERENCES profiles(name) ON DELETE CASCADE,
            day TEXT NOT NULL,
            hour INTEGER NOT NULL CHECK (hour BETWEEN 0 AND 23),
            urges INTEGER NOT NULL DEFAULT 0,
            PRIMARY KEY (profile, day, hour)
        ) STRICT;
        CREATE TABLE daily_rollup_entries (
            profile TEXT NOT NULL REFERENCES profiles(name) ON DELETE CASCADE,
            day TEXT NOT NULL,
            entry TEXT NOT NULL,
            urges INTEGER NOT NULL DEFAULT 0,
            resisted INTEGER NOT NULL DEFAULT 0,
            PRIMARY KEY (profile, day, entry)
        ) STRICT;
        CREATE TABLE insight_marks (
            profile TEXT NOT NULL REFERENCES profiles(name) ON DELETE CASCADE,
            key TEXT NOT NULL,
            time INTEGER NOT NULL,
            PRIMARY KEY (profile, key)
        ) STRICT;
        """),
        // SPEC §4a daily allowances and §5a pauses. The ledger's and the batches' CHECKs name their
        // values, so both tables are copied into new ones that allow `allowance` (SQLite cannot
        // change a CHECK in place); the ledger keeps its ids and its AUTOINCREMENT sequence.
        ("v4 allowances and pauses", """
        CREATE TABLE ledger_new (
            id INTEGER PRIMARY KEY AUTOINCREMENT,
            profile TEXT NOT NULL REFERENCES profiles(name) ON DELETE CASCADE,
            time INTEGER NOT NULL,
            delta_seconds INTEGER NOT NULL,
            reason TEXT NOT NULL CHECK (reason IN ('earn', 'spend', 'bypassFree', 'bypassCredit', 'bypassToken',
                                                    'adjust', 'starter', 'expire', 'capDiscard', 'allowance')),
            entry TEXT,
            note TEXT
        ) STRICT;
        INSERT INTO ledger_new (id, profile, time, delta_seconds, reason, entry, note)
            SELECT id, profile, time, delta_seconds, reason, entry, note FROM ledger;
        DELETE FROM sqlite_sequence WHERE name = 'ledger_new';
        INSERT INTO sqlite_sequence (name, seq) SELECT 'ledger_new', seq FROM sqlite_sequence WHERE name = 'ledger';
        DROP TABLE ledger;
        ALTER TABLE ledger_new RENAME TO ledger;
        CREATE INDEX ledger_profile_time ON ledger(profile, time);
        CREATE TABLE wallet_batches_new (
            profile TEXT NOT NULL REFERENCES profiles(name) ON DELETE CASCADE,
            position INTEGER NOT NULL,
            origin TEXT NOT NULL CHECK (origin IN ('earned', 'starter', 'adjustment', 'allowance')),
            earned_day TEXT CHECK ((origin IN ('earned', 'allowance')) = (earned_day IS NOT NULL)),
            created_at INTEGER NOT NULL,
            expires_at INTEGER,
            remaining INTEGER NOT NULL CHECK (remaining > 0),
            earmark TEXT,
            allowance_key TEXT CHECK ((origin = 'allowance') = (allowance_key IS NOT NULL)),
            PRIMARY KEY (profile, position)
        ) STRICT;
        INSERT INTO wallet_batches_new (profile, position, origin, earned_day, created_at, expires_at, remaining, earmark)
            SELECT profile, position, origin, earned_day, created_at, expires_at, remaining, earmark FROM wallet_batches;
        DROP TABLE wallet_batches;
        ALTER TABLE wallet_batches_new RENAME TO wallet_batches;
        ALTER TABLE wallet_state ADD COLUMN allowance_day TEXT;
        ALTER TABLE wallet_state ADD COLUMN allowance_granted TEXT NOT NULL DEFAULT '{}';
        CREATE TABLE allowances (
            profile TEXT NOT NULL REFERENCES profiles(name) ON DELETE CASCADE,
            entries TEXT NOT NULL,
            seconds TEXT NOT NULL,
            cooldown_until INTEGER,
            PRIMARY KEY (profile, entries)
        ) STRICT;
        CREATE TABLE pauses (
            profile TEXT PRIMARY KEY NOT NULL REFERENCES profiles(name) ON DELETE CASCADE,
            start INTEGER NOT NULL,
            "end" INTEGER NOT NULL CHECK ("end" > start),
            reason TEXT,
            paused_by TEXT
        ) STRICT;
        """),
        // Which lists the household has (`scrolloff lists add`): kept in the state so every helper
        // of one shared store knows them; each helper's copy and its record stay files in
        // `<state>/lists`. A helper's files from before are carried in once at its start.
        ("v5 household lists", """
        CREATE TABLE household_lists (
            name TEXT PRIMARY KEY NOT NULL CHECK (length(name) > 0),
            url TEXT NOT NULL,
            added_by_uid INTEGER,
            added_by_gid INTEGER,
            added INTEGER NOT NULL,
            added_on TEXT NOT NULL DEFAULT ''
        ) STRICT;
        """),
        // The names a refresh dropped from a list a rule holds (SPEC §3), the household's: every
        // helper keeps them in force, whichever one's refresh dropped them. One row per list, the
        // rule lines as one text; `revision` tells a helper when its own copy of them is behind.
        ("v6 held list names", """
        CREATE TABLE held_list_names (
            name TEXT PRIMARY KEY NOT NULL CHECK (length(name) > 0),
            rules TEXT NOT NULL DEFAULT '',
            name_count INTEGER NOT NULL CHECK (name_count >= 0),
            revision INTEGER NOT NULL,
            held_until INTEGER,
            reason TEXT NOT NULL DEFAULT '',
            held_since INTEGER NOT NULL,
            CHECK ((name_count = 0) = (rules = ''))
        ) STRICT;
        """),
    ]
}
