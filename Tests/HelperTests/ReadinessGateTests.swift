import Synchronization
import Testing

@testable import Helper

/// systemd's first READY=1 waits for every listener (SPEC §13): the gate opens on the last part.
struct ReadinessGateTests {
    /// Each row: the parts waited for, the order they bind in, the report after which it opens.
    @Test(arguments: [
        ([ReadinessGate.Part.dns, .control], [ReadinessGate.Part.dns, .control], 2),
        ([.dns, .control], [.control, .dns], 2),
        ([.dns, .control, .metrics], [.dns, .metrics, .control], 3),
        ([.dns, .control, .metrics], [.metrics, .metrics, .dns, .control], 4), // a repeated part counts once
    ])
    func opens_once_when_the_last_part_is_bound(_ parts: [ReadinessGate.Part], _ order: [ReadinessGate.Part], _ opensAt: Int) {
        let statuses = Mutex<[String]>([])
        let gate = ReadinessGate(waitingFor: Set(parts), onOpen: { status in statuses.withLock { $0.append(status) } })
        for (index, part) in order.enumerated() {
            #expect(!gate.isOpen)
            gate.bound(part, status: part == .dns ? "answering DNS on 127.0.0.1:53" : nil)
            #expect(gate.isOpen == (index + 1 >= opensAt), "after \(order[...index])")
        }
        gate.bound(.dns, status: "again")
        #expect(statuses.withLock { $0 } == ["answering DNS on 127.0.0.1:53"])
    }

    @Test func without_every_part_it_stays_closed_and_tells_nobody() {
        let opened = Atomic<Int>(0)
        let gate = ReadinessGate(waitingFor: [.dns, .control, .metrics], onOpen: { _ in opened.add(1, ordering: .relaxed) })
        gate.bound(.dns, status: "answering DNS on 127.0.0.1:53")
        gate.bound(.control)
        #expect(!gate.isOpen)
        #expect(opened.load(ordering: .relaxed) == 0)
    }
}
