import ControlAPI
@testable import DoctorChecks
import Testing

/// `doctor`'s database check on a shared store (`[store] backend = "postgresql"`): its findings
/// say what to do themselves; SQLite's page check and recovery command are not theirs.
struct DoctorSharedStoreVerdictTests {
    static let url = "postgresql://scrolloff@192.168.1.2:5432/scrolloff?sslmode=verify-full"

    @Test func a_shared_stores_finding_fails_in_its_own_words_without_the_sqlite_recovery_command() {
        let finding = "notifications from the household database have not arrived for 12 s (its LISTEN connection: closed)"
        let check = DoctorVerdicts.database(DoctorDatabaseFacts(path: Self.url, problems: [finding]))
        #expect(check.status == .fail)
        #expect(check.detail == "the household database \(Self.url): \(finding)")
        #expect(!check.detail.contains("PRAGMA") && !(check.fix ?? "").contains("sqlite3"), "\(check)")
        let ok = DoctorVerdicts.database(DoctorDatabaseFacts(path: Self.url, problems: []))
        #expect(ok.status == .pass && !ok.detail.contains("PRAGMA"), "\(ok)")
    }
}
