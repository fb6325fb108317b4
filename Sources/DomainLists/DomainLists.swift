// DomainLists: the names Scroll Off blocks and how it finds them fast.
//
// - `DomainName`, `Punycode`: one normalized form for every name (SPEC §1: case-insensitive,
//   trailing dot ignored, IDNA A-labels).
// - `ListParser`: streaming parser for plain, hosts, adblock and wildcard lists with a bad-line
//   budget (ARCHITECTURE principle 5). `ListFetch` calls it on downloaded files.
// - `Catalog`: the curated `blocklists/` folder (services by id and category, always-allow lists).
// - `MatcherBuilder` → `DomainMatcher`: the compact suffix matcher the query path asks, published
//   whole through `MatcherBox`. Figures: `bench/matcher.sh`.
