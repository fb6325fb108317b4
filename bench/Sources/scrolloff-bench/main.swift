// Micro-benchmarks for the hot path, one per argument: `scrolloff-bench decision`, `scrolloff-bench matcher`.
// Add a bench by adding a case here and a file next to this one; each has a bench/<name>.sh runner.

let benches: [String: ([String]) -> Void] = [
    "decision": DecisionBench.run,
    "matcher": MatcherBench.run,
    "hosts": HostsBench.run,
    "reply": ReplyBench.run,
    "listload": ListLoadBench.run,
]

let arguments = Array(CommandLine.arguments.dropFirst())
if let name = arguments.first, let bench = benches[name] {
    bench(Array(arguments.dropFirst()))
} else {
    print("usage: scrolloff-bench <bench> [options]; benches: \(benches.keys.sorted().joined(separator: ", "))")
}
