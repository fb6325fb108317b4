import ControlServer
import ServiceLifecycle
import Synchronization

/// Holds systemd's first `READY=1` until every listener the helper opens is bound
/// (sd_notify(3): READY=1 means "start-up is finished"), so `systemctl start scrolloff-dns &&
/// scrolloff doctor` finds the control socket answering, not only DNS.
///
/// The DNS server, the control server and the metrics server bind in parallel; each reports its
/// part once, and the last one to report opens the gate. The gate opens once: a later report
/// (there is none today) changes nothing.
final class ReadinessGate: Sendable {
    /// One listener the helper waits for.
    enum Part: Hashable, Sendable, CaseIterable {
        /// `hosts`: the first check of the hosts-file section is done (hosts mode).
        case dns, control, metrics, hosts
    }

    private struct State {
        var waiting: Set<Part>
        var dnsStatus = "answering DNS"
    }

    private let state: Mutex<State>
    private let opened = Atomic<Bool>(false)
    private let onOpen: @Sendable (_ status: String) -> Void

    /// - Parameters:
    ///   - parts: the listeners this run opens (metrics only when it is on).
    ///   - onOpen: called once, on the thread of the last part to report, with the status line.
    init(waitingFor parts: Set<Part>, onOpen: @escaping @Sendable (_ status: String) -> Void) {
        state = Mutex(State(waiting: parts))
        self.onOpen = onOpen
    }

    /// Whether every part has reported, i.e. systemd has been told READY=1. Until then a reload
    /// must not send RELOADING=1/READY=1: systemd would read that READY=1 as the end of start-up.
    var isOpen: Bool { opened.load(ordering: .acquiring) }

    /// `part` is bound. `status` (the DNS part's addresses) becomes systemd's STATUS= line.
    func bound(_ part: Part, status: String? = nil) {
        let openNow: String? = state.withLock { state in
            if let status { state.dnsStatus = status }
            guard state.waiting.remove(part) != nil, state.waiting.isEmpty else { return nil }
            return state.dnsStatus
        }
        guard let openNow else { return }
        // Set before telling systemd, so a SIGHUP handled right after READY=1 is announced.
        opened.store(true, ordering: .releasing)
        onOpen(openNow)
    }
}

/// The control server as a helper service that reports its bound socket to the `ReadinessGate`.
struct ReportingControlServer: Service {
    let server: ControlServer
    let readiness: ReadinessGate

    func run() async throws {
        let readiness = readiness
        try await server.run(whenBound: { readiness.bound(.control) })
    }
}
