// DomainLists: the names Scroll Off blocks and how it finds them fast.
//
// - `DomainName`, `Punycode`: one normalized form for every name (SPEC §1: case-insensitive,
//   trailing dot ignored, IDNA A-labels).
// - `ListParser`: streaming parser for plain, hosts, adblock and wildcard lists with a bad-line
//   budget (ARCHITECTURE principle 5). `ListFetch` calls it on downloaded files.
// - `Catalog`: the curated `blocklists/` folder (services by id and category, always-allow lists).
// - `MatcherBuilder` → `DomainMatcher`: the compact suffix matcher the query path asks, published
//   whole by the helper's `EnforcementBox`. Figures: `bench/matcher.sh`.
// - `LayeredMatcher`: a large lists matcher and a small custom one answering as one, so a custom
//   domain's change builds only the small one.
