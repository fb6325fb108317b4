// Matcher benchmark (SPEC §1): builds a DomainMatcher from synthetic names and prints build
// time, memory per domain, lookup time and allocations per lookup against the targets.
// Run through bench/matcher.sh (`scrolloff-bench matcher`), which builds in release mode and preloads
// the allocation counter of bench/alloc_count.c.
//
// Times are reported as wall clock and as the thread's CPU time; the verdict uses CPU time,
// because this machine is shared and wall time includes time spent waiting for a core. Lookup
// figures are the best of several rounds over the same 1,000,000 queries.
import DomainLists
#if canImport(Glibc)
import Glibc
#endif

enum MatcherBench {
    static func run(_ arguments: [String]) {
        exit(measure(domainCount: arguments.first.flatMap { Int($0) } ?? 1_000_000))
    }
}

private func measure(domainCount: Int) -> Int32 {
    let queryCount = 1_000_000
    let rounds = 5

    print("matcher benchmark: \(domainCount) synthetic domains, \(queryCount) queries, best of \(rounds) rounds")
    let domains = Synthetic.domains(domainCount, seed: 42)

    // MARK: build (first, so that the RSS baseline holds little besides the input names)

    trimHeap()
    let residentBefore = residentBytes()
    let build = timed { () -> DomainMatcher in
        var builder = MatcherBuilder()
        domains.bytes.withUnsafeBufferPointer { bytes in
            for index in 0..<domains.count {
                builder.add(normalizedName: UnsafeBufferPointer(rebasing: bytes[domains.range(index)]),
                            scope: .nameAndSubdomains, entry: EntryIndex(UInt32(index % 16)))
            }
        }
        return builder.build()
    }
    let matcher = build.result
    trimHeap()
    let residentPerDomain = Double(residentBytes() - residentBefore) / Double(domainCount)
    let tablePerDomain = Double(matcher.tableBytes) / Double(domainCount)
    print("build     \(format(build.cpu, 3)) s CPU, \(format(build.wall, 3)) s wall for \(domainCount) domains "
        + "(\(matcher.nodeCount) trie nodes, \(matcher.entrySets.count) entry sets)")
    print("memory    \(format(tablePerDomain)) bytes/domain counted (hash slots + node records + label arena + entry sets)")
    print("memory    \(format(residentPerDomain)) bytes/domain resident (RSS from /proc/self/statm after vs before the build, heap trimmed)")

    print("memory    \(anonHugePageBytes() >> 20) MiB of the process on transparent huge pages")

    // MARK: parse

    let hostsText = Synthetic.hostsFile(domains)
    let parse = timed { () -> ParsedList? in try? ListParser.parse(hostsText) }
    guard let parsed = parse.result else {
        print("FAIL the synthetic hosts file did not parse")
        return 1
    }
    print("parse     \(parsed.lineCount) hosts lines in \(format(parse.cpu, 3)) s CPU, \(format(parse.wall, 3)) s wall "
        + "(\(parsed.rules.count) rules, format \(parsed.formats.dominant.map { "\($0)" } ?? "-"))")

    // MARK: lookup

    let queries = Synthetic.queries(queryCount, from: domains, seed: 7)
    let wireQueries = queries.wireFormat()

    struct LookupFigures {
        var cpuNanoseconds = Double.infinity
        var wallNanoseconds = Double.infinity
        var blocked = 0
        var allocations: UInt64?
    }
    func timeLookups(_ names: PackedNames, _ lookup: (UnsafeRawBufferPointer) -> MatchResult) -> LookupFigures {
        var figures = LookupFigures()
        let allocationsBefore = AllocationCounter.read?()
        names.bytes.withUnsafeBytes { bytes in
            for _ in 0..<rounds {
                let round = timed { () -> Int in
                    var blocked = 0
                    var lower = 0
                    for end in names.ends {
                        if lookup(UnsafeRawBufferPointer(rebasing: bytes[lower..<end])).isBlocked { blocked += 1 }
                        lower = end
                    }
                    return blocked
                }
                figures.blocked = round.result
                figures.cpuNanoseconds = min(figures.cpuNanoseconds, round.cpu / Double(names.count) * 1e9)
                figures.wallNanoseconds = min(figures.wallNanoseconds, round.wall / Double(names.count) * 1e9)
            }
        }
        if let before = allocationsBefore, let after = AllocationCounter.read?() { figures.allocations = after - before }
        return figures
    }

    let text = timeLookups(queries) { matcher.match(text: $0) }
    let wire = timeLookups(wireQueries) { matcher.match(wire: $0) }
    let lookupCount = UInt64(queryCount * rounds)
    print("lookup    text names: \(format(text.cpuNanoseconds)) ns CPU, \(format(text.wallNanoseconds)) ns wall per lookup")
    print("lookup    wire names: \(format(wire.cpuNanoseconds)) ns CPU, \(format(wire.wallNanoseconds)) ns wall per lookup")
    print("lookup    queries: 1/3 listed, 1/3 under a listed name, 1/3 not listed; \(text.blocked) blocked")
    // The same queries by kind, text form: a hit walks deeper and verifies more than a miss.
    for (kind, name) in ["listed name", "under a listed name", "not listed"].enumerated() {
        var subset = PackedNames()
        for index in stride(from: kind, to: queries.count, by: 3) { subset.append(Array(queries.bytes[queries.range(index)])) }
        let figures = timeLookups(subset) { matcher.match(text: $0) }
        print("lookup      \(name): \(format(figures.cpuNanoseconds)) ns CPU")
    }
    // The same wire queries through a `LayeredMatcher`: this matcher as its lists layer and a
    // custom layer of 50 custom domains (25 of the listed names, 25 new), as the DNS path asks
    // when custom domains are blocked; and how long putting the layers together takes (what a
    // custom domain's change costs besides building its few names).
    var customBuilder = MatcherBuilder()
    for index in 0..<50 {
        let name = index < 25 ? Array(domains.bytes[domains.range(index * 7919 % domains.count)]) : Array("custom\(index).example".utf8)
        name.withUnsafeBufferPointer { customBuilder.add(normalizedName: $0, scope: .nameAndSubdomains, entry: EntryIndex(UInt32(16 + index))) }
    }
    let customLayer = customBuilder.build()
    let together = timed { LayeredMatcher(lists: matcher, custom: customLayer) }
    let layered = together.result
    let layeredWire = timeLookups(wireQueries) { layered.match(wire: $0) }
    print("layered   wire names: \(format(layeredWire.cpuNanoseconds)) ns CPU per lookup with 50 custom domains; "
        + "put together in \(format(together.cpu * 1000, 3)) ms CPU (\(layered.entrySets.count - matcher.entrySets.count) pair sets)")
    for (name, figures) in [("text", text), ("wire", wire), ("layered", layeredWire)] {
        let counted = figures.allocations.map { "\($0) allocations in \(lookupCount) lookups" }
            ?? "not measured (run through bench/matcher.sh, which preloads bench/alloc_count.c)"
        print("allocs    \(name): \(counted)")
    }

    // MARK: verdict

    var failures = 0
    func check(_ name: String, _ ok: Bool, _ figure: String) {
        print("\(ok ? "PASS" : "FAIL")  \(name): \(figure)")
        if !ok { failures += 1 }
    }
    print("")
    check("built in <= 1.5 s", build.cpu <= 1.5, "\(format(build.cpu, 3)) s CPU")
    check("<= 48 bytes per domain", max(residentPerDomain, tablePerDomain) <= 48,
          "\(format(tablePerDomain)) counted, \(format(residentPerDomain)) resident")
    check("lookup <= 300 ns", max(text.cpuNanoseconds, wire.cpuNanoseconds) <= 300,
          "text \(format(text.cpuNanoseconds)) ns, wire \(format(wire.cpuNanoseconds)) ns (CPU)")
    if let textAllocations = text.allocations, let wireAllocations = wire.allocations, let layeredAllocations = layeredWire.allocations {
        check("no allocation per lookup", textAllocations + wireAllocations + layeredAllocations == 0,
              "\(textAllocations + wireAllocations + layeredAllocations) in \(3 * lookupCount) lookups")
    } else {
        check("no allocation per lookup", false, "not measured")
    }
    return failures == 0 ? 0 : 1
}

