@testable import Config
@testable import Helper
import Testing

/// `[store]`: SQLite by default; a PostgreSQL URL checked when the file is read (`check-config`).
@Suite("[store]: where the state lives")
struct StoreSectionTests {
    @Test func sqlite_is_the_default_and_a_postgresql_url_reaches_the_settings() throws {
        #expect(try parse("").store == StoreSettings())
        #expect(try parse("").store.backend == .sqlite)
        let c = try parse("""
            [store]
            backend = "postgresql"
            url = "postgresql://scrolloff@db.home.arpa/scrolloff"
            password_file = "/etc/scrolloff/db-password"
            node = "resolver-2"
            """)
        #expect(c.store.backend == .postgresql)
        #expect(c.store.url == "postgresql://scrolloff@db.home.arpa/scrolloff")
        #expect(c.store.passwordFile == "/etc/scrolloff/db-password")
        #expect(c.store.node == "resolver-2")
    }

    @Test(arguments: [
        ("[store]\nbackend = \"postgresql\"\n", "store.url", "write the server's URL"),
        ("[store]\nbackend = \"postgresql\"\nurl = \"mysql://db/scrolloff\"\n", "store.url", "postgresql://USER@HOST:5432/DATABASE"),
        ("[store]\nbackend = \"postgresql\"\nurl = \"postgresql://scrolloff:secret@db/scrolloff\"\n", "store.url", "password_file"),
        ("[store]\nbackend = \"postgresql\"\nurl = \"postgresql://scrolloff@db\"\n", "store.url", "names no database"),
        ("[store]\nbackend = \"postgresql\"\nurl = \"postgresql://scrolloff@db/s?sslmode=maybe\"\n", "store.url", "verify-full"),
        ("[store]\nbackend = \"postgresql\"\nurl = \"postgresql://scrolloff@/s?host=/run/postgresql&sslmode=require\"\n", "store.url", "Unix socket"),
        ("[store]\nurl = \"postgresql://scrolloff@db/s\"\n", "store.url", "set backend = "),
        ("[store]\nbackend = \"mysql\"\n", "store.backend", "sqlite or postgresql"),
        ("[store]\npassword_file = \"db-password\"\n", "store.password_file", "absolute path"),
        ("[store]\nnode = \"my resolver\"\n", "store.node", "letters, digits"),
    ])
    func a_bad_store_value_is_refused_saying_what_to_write(_ text: String, _ key: String, _ words: String) {
        let found = problems(text)
        #expect(found.contains { $0.key == key && ($0.problem.contains(words) || ($0.allowed ?? "").contains(words)) }, "\(found)")
    }
}
