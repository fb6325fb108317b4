import Testing
@testable import DomainLists

/// The repository's own `blocklists/` folder, as shipped. Loading it at all proves every file
/// parses with zero bad lines and a known category (the loader refuses anything else).
struct RealCatalogTests {
    @Test func the_shipped_catalog_loads_and_covers_the_popular_five() throws {
        let catalog = try Catalog.load(folder: Paths.repositoryBlocklists)
        for id in ["instagram", "tiktok", "twitter", "reddit", "youtube"] {
            let service = try #require(catalog.service(id: id), "\(id) has no list")
            #expect(service.domains.count >= 3, "\(id) lists only \(service.domains.count) domains")
        }
        #expect(catalog.services.count >= 44)
        #expect(catalog.services.allSatisfy { ServiceCategory.allCases.contains($0.category) })
        #expect(!catalog.allowSets.isEmpty)
        #expect(catalog.services.allSatisfy { !$0.source.isEmpty })
    }

    @Test func the_shipped_lists_parse_with_zero_bad_lines_through_the_list_parser_too() throws {
        for folder in ["services", "allow"] {
            for path in try Catalog.listFiles(in: Paths.repositoryBlocklists + "/" + folder) {
                let parsed = try ListParser.parse(contentsOfFile: path, options: ListParseOptions(budget: .none))
                #expect(parsed.badLineCount == 0, "\(path)")
                #expect(parsed.formats.dominant == .plain, "\(path)")
            }
        }
    }

    @Test func the_encrypted_dns_list_loads_when_shipped() throws {
        let folder = Paths.repositoryBlocklists + "/doh"
        for path in try Catalog.listFiles(in: folder) {
            let list = try Catalog.loadNamedList(file: path)
            #expect(!list.domains.isEmpty, "\(path)")
            #expect(list.license != nil, "\(path) must keep its licence notice")
        }
    }

    @Test func a_blocked_service_never_blocks_an_always_allowed_name() throws {
        let catalog = try Catalog.load(folder: Paths.repositoryBlocklists)
        var builder = MatcherBuilder()
        for (index, service) in catalog.services.enumerated() { builder.add(service.rules, entry: EntryIndex(UInt32(index))) }
        for allow in catalog.allowSets { builder.allowAll(allow.rules) }
        let matcher = builder.build()
        for allow in catalog.allowSets {
            for domain in allow.domains { #expect(!matcher.match(domain.text).isBlocked, "\(domain)") }
        }
        // Every name under a listed domain carries the service's entry, allowed or not.
        let instagram = try #require(catalog.services.firstIndex { $0.id == "instagram" })
        for domain in catalog.services[instagram].domains {
            let result = matcher.match("www." + domain.text)
            #expect(matcher.entries(of: result.entrySet).contains(EntryIndex(UInt32(instagram))), "\(domain)")
        }
    }
}
