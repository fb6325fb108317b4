import Config
import Helper
import Testing

struct CatalogLocationTests {
    @Test func explicit_flag_wins_even_when_the_folder_is_missing() throws {
        let found = try CatalogLocation.find(
            explicit: "/nowhere/blocklists", environment: ["SCROLLOFF_CATALOG": "/env/blocklists"],
            executablePath: "/usr/local/bin/scrolloff-dns", isCatalog: { _ in true })
        #expect(found == "/nowhere/blocklists")
    }

    @Test func environment_comes_before_the_installed_copy() throws {
        let found = try CatalogLocation.find(
            explicit: nil, environment: ["SCROLLOFF_CATALOG": "/env/blocklists"],
            executablePath: "/usr/local/bin/scrolloff-dns", isCatalog: { _ in true })
        #expect(found == "/env/blocklists")
    }

    @Test func installed_binary_finds_share_under_its_prefix() throws {
        let found = try CatalogLocation.find(
            explicit: nil, environment: [:], executablePath: "/usr/local/bin/scrolloff-dns",
            isCatalog: { $0 == "/usr/local/share/scrolloff/blocklists" })
        #expect(found == "/usr/local/share/scrolloff/blocklists")
    }

    @Test func source_tree_build_finds_the_checkout_catalog_above_dot_build() throws {
        let found = try CatalogLocation.find(
            explicit: nil, environment: [:],
            executablePath: "/home/sam/scrolloff/.build/x86_64-unknown-linux-gnu/release/scrolloff-dns",
            isCatalog: { $0 == "/home/sam/scrolloff/blocklists" })
        #expect(found == "/home/sam/scrolloff/blocklists")
    }

    @Test func nothing_found_names_every_place_searched_and_the_fix() {
        #expect {
            try CatalogLocation.find(
                explicit: nil, environment: ["SCROLLOFF_CATALOG": "/env/missing"],
                executablePath: "/opt/so/bin/scrolloff-dns", isCatalog: { _ in false })
        } throws: { error in
            let text = "\(error)"
            return text.contains("/env/missing") && text.contains("/opt/so/share/scrolloff/blocklists")
                && text.contains("--catalog")
        }
    }
}
