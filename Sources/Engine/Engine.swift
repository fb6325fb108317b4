// The helper's state engine (SPEC §3, §4): the piece between the control API and the
// DNS path. One actor, `HelperEngine`, owns every profile's rules and credit account; nothing else
// writes the store, which it reaches only through `StateStore` (Sources/Store/StateStore.swift).
//
// The actor is the single owner and serialiser; each concern keeps its state and the rules that
// need nothing else in a capability type the actor holds, in its own folder:
//   Lists/ListsLifecycle      the fetched lists in force, overlapping `setLists` calls, the list guard
//   Household/TimeRequests    members' requests for time, their expiry and retention
//   Household/Household       adjustments and notes (bounds, the ledger row an approval writes)
//   Plans/PlanBook            plans and alternatives, and the bypass flow that counts a plan once
//   Wallet/CommitBooks        what the next commit owes: tamper events, rewound wallets, held changes
//   Insights/InsightChecks    milestones and the weekly digest, looked for once each
//   EventLog/RuleChanges      the `ruleChange` events a command's change makes, in words
//   EventLog/RefusalLog       refusals coalesced into few rows
// The HelperEngine+*.swift files are the command entry points: they advance the clock, run the
// command on a copy (`perform`), commit, and only then change the capability's state.
//
// Control side (every command validates, applies the ScrollOffCore rules on the trusted clock,
// commits with the clock anchor in one transaction, then publishes the new enforcement):
//   let engine = try await HelperEngine.start(configuration:timeSource:logger:)
//   block / unblock / addSchedule / schedules / removeSchedule / focus
//   use / stop / peek / token / nextBypassStep / recordExercise
//   addPlan / planList / archivePlan / addAlternative / alternativeList
//   status / wallet / events / stats
//   addProfile / profileList / profileOwners / profileAccess / removeProfile
//   household (HelperEngine+Household.swift): adjust / requestTime / timeRequests / answerTimeRequest,
//     profileName(forClient:) (the device's profile, as DNS decides it), setUnknownDevices
//   applyConfiguredProfiles (the configuration file's profiles, at every start and reload)
//   setLists (lists come from the control side's ListsController; HelperControl wires them)
// Results are the control API's Codable wire types (Sources/ControlAPI); failures are `EngineError`, whose `.refused`
// carries the core's `Refusal` (CLI exit code 1).
//
// DNS side (no allocation per query):
//   let e = engine.box.enforcement                 // once per query
//   let now = e.now()                              // trusted time from CLOCK_BOOTTIME
//   let d = e.decide(wire: name, client: ip, now: now)
//   if d.blocked && d.managed { engine.recordUrge(d, enforcement: e, client: ip, now: now) }
//
// Timers: `HelperEngine` is a swift-service-lifecycle `Service`; put it in the ServiceGroup. Its
// `run()` sleeps until `nextDueInstant()` and is woken early by every command.
