// The helper's state engine (SPEC §3, §4): the piece between the control API and the
// DNS path. One actor, `HelperEngine`, owns every profile's rules and credit account; nothing else
// writes the store.
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
