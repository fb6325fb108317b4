import Foundation
import ListFetch
import ScrollOffCore
import Testing

/// The store's side of "a list under a lock never shrinks" (SPEC §3): a refresh with a hold writes
/// the dropped names to `<name>.held` and records them; `releaseHeld` and `remove` take them away.
/// The dropper here is a plain line-set difference (the helper passes the DomainLists one).
@Suite("ListStore holds dropped names under a lock")
struct HeldNamesTests {
    static let lineDropper: ListDropper = { kept, newCopy, output in
        func lines(_ path: String) throws -> Set<String> {
            Set(try String(contentsOfFile: path, encoding: .utf8).split(separator: "\n").map(String.init).filter { !$0.hasPrefix("#") })
        }
        let now = try lines(newCopy)
        let dropped = try kept.reduce(into: Set<String>()) { $0.formUnion(try lines($1)) }.subtracting(now)
        try dropped.sorted().map { $0 + "\n" }.joined().write(toFile: output, atomically: false, encoding: .utf8)
        return dropped.count
    }

    @Test func a_held_refresh_keeps_dropped_names_on_disk_until_released() async throws {
        let directory = try Scratch.directory("held")
        defer { Scratch.remove(directory) }
        let clock = ManualClock()
        let store = ListStore(stateDirectory: directory + "/state", validator: HostnameValidator(maxBadLines: 0).asValidator,
                              dropper: Self.lineDropper, clock: clock.reading)
        let source = directory + "/kids.txt"
        let name = try ListName("kids")
        try "a.example.com\nb.example.com\nc.example.com\n".write(toFile: source, atomically: true, encoding: .utf8)
        _ = await store.refresh(name, from: "file://" + source)

        // Two refreshes under one lock: names dropped by either stay held, a name back is not held.
        let lockEnd = clock.now + .hours(2)
        let hold = ListHold(until: lockEnd, reason: "kids is in cooldown")
        try "a.example.com\nd.example.com\n".write(toFile: source, atomically: true, encoding: .utf8)
        try FileManager.default.setAttributes([.modificationDate: Date().addingTimeInterval(5)], ofItemAtPath: source)
        let first = await store.refresh(name, from: "file://" + source, hold: hold)
        #expect(first.outcome == .updated(entryCount: 2, sizeBytes: 28))
        #expect(first.metadata.held == HeldNames(count: 2, until: lockEnd, reason: "kids is in cooldown", since: clock.now))
        #expect(try String(contentsOfFile: store.heldPath(for: name), encoding: .utf8) == "b.example.com\nc.example.com\n")

        clock.advance(.minutes(5))
        try "b.example.com\n".write(toFile: source, atomically: true, encoding: .utf8)
        try FileManager.default.setAttributes([.modificationDate: Date().addingTimeInterval(10)], ofItemAtPath: source)
        let second = await store.refresh(name, from: "file://" + source, hold: hold)
        #expect(second.metadata.held?.count == 3)
        #expect(second.metadata.held?.since == clock.now - .minutes(5), "held since the first refresh under the lock")
        #expect(try String(contentsOfFile: store.heldPath(for: name), encoding: .utf8) == "a.example.com\nc.example.com\nd.example.com\n")
        #expect(try await store.metadata(for: name)?.held?.count == 3, "recorded with the copy")

        try await store.releaseHeld(name)
        #expect(store.hasHeldNames(name) == false)
        #expect(try await store.metadata(for: name)?.held == nil)

        // A hold again, then `remove`: nothing of the list is left.
        try "e.example.com\n".write(toFile: source, atomically: true, encoding: .utf8)
        try FileManager.default.setAttributes([.modificationDate: Date().addingTimeInterval(15)], ofItemAtPath: source)
        _ = await store.refresh(name, from: "file://" + source, hold: hold)
        #expect(store.hasHeldNames(name))
        try await store.remove(name)
        #expect(try FileManager.default.contentsOfDirectory(atPath: store.listsDirectory).isEmpty)
    }
}
