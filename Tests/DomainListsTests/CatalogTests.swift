import Testing
@testable import DomainLists

/// The loader against the small fixture catalog in Fixtures/catalog, and against hand-written
/// broken files.
struct CatalogTests {
    static let folder = Paths.fixtures + "/catalog"

    @Test func loads_services_with_their_headers_and_domains() throws {
        let catalog = try Catalog.load(folder: Self.folder)
        #expect(catalog.services.map(\.id) == ["clipstream", "pictogram", "pingchat", "yakyak"])
        let pictogram = try #require(catalog.service(id: "pictogram"))
        #expect(pictogram.name == "Pictogram")
        #expect(pictogram.category == .social)
        #expect(pictogram.source == "Scroll Off test fixture (invented service)")
        #expect(pictogram.note == "Pictogram Reels cannot be blocked apart from Pictogram: they share its hosts.")
        #expect(pictogram.license == nil)
        #expect(pictogram.domains.map(\.text)
            == ["pictogram.test", "www.pictogram.test", "m.pictogram.test", "i.pictogram.test", "pictogram-cdn.test", "api.pictogram.test"])
        let clipstream = try #require(catalog.service(id: "ClipStream"))
        #expect(clipstream.license == "CC0-1.0")
        #expect(clipstream.domains.last?.text == "xn--clipstrm-t4a.example")
    }

    @Test func categories_are_queryable() throws {
        let catalog = try Catalog.load(folder: Self.folder)
        #expect(catalog.categories == [.messaging, .social, .video])
        #expect(catalog.services(in: .social).map(\.id) == ["pictogram", "yakyak"])
        #expect(catalog.resolve("social")?.map(\.id) == ["pictogram", "yakyak"])
        #expect(catalog.resolve("SOCIAL")?.count == 2)
        #expect(catalog.resolve("pingchat")?.map(\.id) == ["pingchat"])
        #expect(catalog.resolve("gaming")?.isEmpty == true)
        #expect(catalog.resolve("news.example.com") == nil)
    }

    @Test func loads_allow_sets() throws {
        let catalog = try Catalog.load(folder: Self.folder)
        #expect(catalog.allowSets.map(\.id) == ["auth", "updates"])
        let auth = try #require(catalog.allowSets.first)
        #expect(auth.name == "Sign-in")
        #expect(auth.purpose.hasPrefix("Sign-in hosts"))
        #expect(auth.note != nil)
        #expect(auth.domains.map(\.text) == ["login.pictogram.test"])
    }

    @Test func a_catalog_feeds_the_matcher_and_allow_beats_block() throws {
        let catalog = try Catalog.load(folder: Self.folder)
        var builder = MatcherBuilder()
        for (index, service) in catalog.services.enumerated() { builder.add(service.rules, entry: EntryIndex(UInt32(index))) }
        for allow in catalog.allowSets { builder.allowAll(allow.rules) }
        let matcher = builder.build()
        let pictogram = try #require(catalog.services.firstIndex { $0.id == "pictogram" })
        #expect(matcher.entries(of: matcher.match("scontent.pictogram-cdn.test").entrySet) == [EntryIndex(UInt32(pictogram))])
        #expect(matcher.match("login.pictogram.test").isAllowed)
        #expect(matcher.match("mirror.distro.test").isAllowed)
    }

    // MARK: broken files

    struct Broken: CustomTestStringConvertible, Sendable {
        var name: String
        var text: String
        var error: CatalogError
        var testDescription: String { name }
    }

    static let header = "# id: demo\n# name: Demo\n# category: social\n# source: test\n"

    @Test("broken service files name the file and line", arguments: [
        Broken(name: "missing category", text: "# id: demo\n# name: Demo\n# source: test\ndemo.test\n",
               error: .missingHeader(file: "services/demo.list", key: "category")),
        Broken(name: "unknown category", text: "# id: demo\n# name: Demo\n# category: socail\n# source: test\ndemo.test\n",
               error: .unknownCategory(file: "services/demo.list", line: 3, category: "socail")),
        Broken(name: "id differs from file", text: "# id: other\n# name: Demo\n# category: social\n# source: test\ndemo.test\n",
               error: .idMismatch(file: "services/demo.list", line: 1, id: "other", expected: "demo")),
        Broken(name: "duplicate header", text: header + "# name: Again\ndemo.test\n",
               error: .duplicateHeader(file: "services/demo.list", line: 5, key: "name")),
        Broken(name: "unknown header", text: header + "# url: https://demo.test\ndemo.test\n",
               error: .unknownHeader(file: "services/demo.list", line: 5, key: "url", known: CatalogFile.serviceKeys)),
        Broken(name: "empty header", text: "# id: demo\n# name:\n# category: social\n# source: test\ndemo.test\n",
               error: .emptyHeader(file: "services/demo.list", line: 2, key: "name")),
        Broken(name: "bad domain", text: header + "demo.test\nde mo.test\n",
               error: .badLine(file: "services/demo.list", line: 6, reason: .unexpectedText("mo.test"))),
        Broken(name: "hosts line", text: header + "0.0.0.0 demo.test\n",
               error: .notADomainLine(file: "services/demo.list", line: 5, text: "0.0.0.0 demo.test")),
        Broken(name: "wildcard", text: header + "*.demo.test\n",
               error: .notADomainLine(file: "services/demo.list", line: 5, text: "*.demo.test")),
        Broken(name: "cosmetic rule", text: header + "demo.test##.feed\n",
               error: .notADomainLine(file: "services/demo.list", line: 5, text: "demo.test##.feed")),
        Broken(name: "no domains", text: header + "# nothing yet\n", error: .noDomains(file: "services/demo.list")),
    ])
    func broken(_ broken: Broken) {
        #expect(throws: broken.error) {
            try CatalogFile.service(text: Array(broken.text.utf8), file: "services/demo.list")
        }
    }

    @Test func header_shaped_comments_after_the_first_domain_are_comments() throws {
        let service = try CatalogFile.service(
            text: Array((Self.header + "demo.test\n# note: not a header here\nwww.demo.test\n").utf8), file: "services/demo.list"
        )
        #expect(service.note == nil)
        #expect(service.domains.count == 2)
    }

    @Test func crlf_and_a_byte_order_mark_are_accepted() throws {
        let text = "\u{FEFF}" + Self.header.replacingCRLF() + "demo.test\r\n"
        let service = try CatalogFile.service(text: Array(text.utf8), file: "services/demo.list")
        #expect(service.id == "demo")
        #expect(service.name == "Demo")
        #expect(service.domains.map(\.text) == ["demo.test"])
    }

    @Test func allow_files_need_a_purpose() {
        #expect(throws: CatalogError.missingHeader(file: "allow/x.list", key: "purpose")) {
            try CatalogFile.allowSet(text: Array("# name: X\nx.test\n".utf8), file: "allow/x.list")
        }
    }

    @Test func a_missing_folder_is_reported_with_its_path() {
        #expect {
            try Catalog.load(folder: Self.folder + "/nowhere")
        } throws: { error in
            guard case CatalogError.unreadable(let path, _) = error else { return false }
            return path.hasSuffix("nowhere/services")
        }
    }

    @Test func error_messages_name_file_and_line() {
        let error = CatalogError.badLine(file: "services/demo.list", line: 6, reason: .emptyAdblockRule)
        #expect(error.description.hasPrefix("services/demo.list:6: "))
    }
}

extension String {
    func replacingCRLF() -> String {
        split(separator: "\n", omittingEmptySubsequences: false).joined(separator: "\r\n")
    }
}
