import ArgumentParser
import ControlAPI
import ControlTransport
import Foundation
import ScrollOffCore
#if canImport(Glibc)
import Glibc
#endif

/// `scrolloff watch --notify`: the moments that matter as desktop notifications on the
/// freedesktop bus (`org.freedesktop.Notifications`), through `notify-send` (Debian's
/// libnotify-bin) run with an argument list, never a shell.
///
/// Where each comes from:
/// - a curfew in 10 minutes: the helper's own `curfewReminder` event, written on its trusted
///   clock (SPEC §2, §11), so a DST night or a moved system clock cannot make it early or late;
/// - a grant ending in 1 minute: worked out here from `status` (each grant's end), read again at
///   every grant event. A per-person nudge, so not a row in the household's 90-day event log;
/// - a request answered (and, for owners, a new request): the `timeRequestAnswered` and
///   `timeRequested` events;
/// - on a workstation, an urge met by a block: an `urge` event from one of this machine's own
///   addresses, at most once per urge episode (60 s per entry), with the rule's end, the plan and
///   the bypass that is still open to the person; never one the helper would refuse.
final class DesktopNotifier: @unchecked Sendable {
    static let program = "/usr/bin/notify-send"
    static let grantWarning: TimeInterval = 60
    static let episode: TimeInterval = 60

    private let client: ControlClient
    private let lock = NSLock()
    /// Grant id → when to tell (this machine's clock), for grants not told of yet.
    private var grantReminders: [Int64: (at: Date, entry: String)] = [:]
    private var told: Set<Int64> = []
    /// Entry → when its last urge was told.
    private var urgesTold: [String: Date] = [:]
    private var failureShown = false
    private let localAddresses: Set<String>

    private init(client: ControlClient) {
        self.client = client
        localAddresses = Self.addressesOfThisMachine()
    }

    static func start(options: GlobalOptions) throws -> DesktopNotifier {
        guard FileManager.default.isExecutableFile(atPath: program) else {
            Terminal.printError("--notify needs \(program) (Debian: `apt install libnotify-bin`) and a desktop session's bus.")
            throw ExitCode(CLIExit.usage)
        }
        let notifier = DesktopNotifier(client: options.client())
        notifier.refreshGrants()
        Thread {
            while true {
                sleep(1)
                notifier.remindDueGrants()
            }
        }.start()
        return notifier
    }

    func handle(_ event: EventReport) {
        switch event.kind {
        case "curfewReminder":
            send("Curfew in 10 minutes", event.message ?? "A curfew starts in 10 minutes.")
        case "timeRequestAnswered":
            send("Your request for time was answered", event.message ?? "")
        case "timeRequested":
            send("A request for time", event.message ?? "")
        case "grantOpened", "grantShortened", "grantEnded":
            refreshGrants()
        case "urge":
            urge(event)
        default:
            break
        }
    }

    // MARK: Grants

    func refreshGrants() {
        guard let status = try? client.call(ControlEndpoints.status) else { return }
        let here = Date()
        lock.withLock {
            grantReminders = [:]
            for grant in status.grants where !told.contains(grant.id) {
                // Measured on the helper's clock (SPEC §11), then placed on this machine's.
                let seconds = Double((grant.end - status.now).milliseconds) / 1000 - Self.grantWarning
                grantReminders[grant.id] = (here.addingTimeInterval(max(0, seconds)), grant.entry)
            }
        }
    }

    func remindDueGrants() {
        let now = Date()
        let due: [(Int64, String)] = lock.withLock {
            let due = grantReminders.filter { $0.value.at <= now }.map { ($0.key, $0.value.entry) }
            for (id, _) in due {
                grantReminders[id] = nil
                told.insert(id)
            }
            return due
        }
        for (_, entry) in due { send("\(entry) closes in 1 minute", "Your time on \(entry) ends in a minute.") }
    }

    // MARK: Urges

    func urge(_ event: EventReport) {
        guard let entry = event.entry, let client = event.clientIP, localAddresses.contains(client) else { return }
        let now = Date()
        let fresh: Bool = lock.withLock {
            if let last = urgesTold[entry], now.timeIntervalSince(last) < Self.episode { return false }
            urgesTold[entry] = now
            return true
        }
        guard fresh else { return }
        send("\(entry) is blocked", Self.urgeText(entry: entry, status: try? self.client.call(ControlEndpoints.status),
                                                  preview: try? self.client.call(ControlEndpoints.bypassPreview, query: [(ControlQuery.entry, entry)])))
    }

    /// "instagram is blocked until 07:00 · your plan: when bored, stretch · `scrolloff peek instagram` (1 free left)".
    static func urgeText(entry: String, status: StatusReport?, preview: BypassPreview?) -> String {
        let state = status?.entries.first { $0.id == entry }
        var parts: [String] = []
        if let state, let until = state.nextChange, let now = status?.now {
            parts.append("\(entry) is blocked until \(TimeWords.clock(until, now: now))")
        } else {
            parts.append("\(entry) is blocked")
        }
        if let plan = preview?.plan { parts.append("your plan: \(plan.when), \(plan.then)") }
        // A curfew refuses every bypass (SPEC §2): nothing is offered that would be refused.
        if state?.state != .curfew, let preview {
            switch preview.step {
            case BypassPreview.freePeek where preview.peeksLeftToday > 0:
                parts.append("`scrolloff peek \(entry)` (\(preview.peeksLeftToday) free left)")
            case BypassPreview.paidPeek where (status?.balanceSeconds ?? 0) >= (preview.costSeconds ?? .max):
                parts.append("`scrolloff peek \(entry)` (costs \(SpanWords.describe(seconds: preview.costSeconds ?? 0, rounding: .up)))")
            case BypassPreview.tokenOnly where preview.tokensLeftMonth > 0:
                parts.append("`scrolloff token \(entry)` (\(preview.tokensLeftMonth) left this month)")
            default:
                break
            }
        }
        return parts.joined(separator: " · ")
    }

    /// The addresses of this machine's interfaces, as the helper spells a client's.
    static func addressesOfThisMachine() -> Set<String> {
        var found: Set<String> = ["127.0.0.1", "::1"]
        var list: UnsafeMutablePointer<ifaddrs>?
        guard getifaddrs(&list) == 0, let first = list else { return found }
        defer { freeifaddrs(list) }
        var cursor: UnsafeMutablePointer<ifaddrs>? = first
        while let entry = cursor {
            if let address = entry.pointee.ifa_addr {
                var host = [CChar](repeating: 0, count: Int(NI_MAXHOST))
                let length = address.pointee.sa_family == sa_family_t(AF_INET6) ? MemoryLayout<sockaddr_in6>.size : MemoryLayout<sockaddr_in>.size
                let family = Int32(address.pointee.sa_family)
                if family == AF_INET || family == AF_INET6,
                   getnameinfo(address, socklen_t(length), &host, socklen_t(host.count), nil, 0, NI_NUMERICHOST) == 0 {
                    let text = String(cString: host)
                    // A link-local address comes back as fe80::1%eth0; the helper writes it without the zone.
                    found.insert(String(text.split(separator: "%").first ?? Substring(text)))
                }
            }
            cursor = entry.pointee.ifa_next
        }
        return found
    }

    // MARK: Sending

    /// One notification through `notify-send`: argv only, so a message with quotes or `$(…)` is text.
    func send(_ summary: String, _ body: String) {
        let process = Process()
        process.executableURL = URL(fileURLWithPath: Self.program)
        process.arguments = ["--app-name=Scroll Off", "--", summary, body]
        process.standardInput = FileHandle.nullDevice
        process.standardOutput = FileHandle.nullDevice
        let errors = Pipe()
        process.standardError = errors
        do {
            try process.run()
            let said = errors.fileHandleForReading.readDataToEndOfFile()
            process.waitUntilExit()
            if process.terminationStatus != 0 { fail(String(decoding: said, as: UTF8.self)) }
        } catch {
            fail("\(error)")
        }
    }

    private func fail(_ detail: String) {
        let first: Bool = lock.withLock {
            defer { failureShown = true }
            return !failureShown
        }
        if first {
            Terminal.printError("A desktop notification could not be shown (\(detail.trimmingCharacters(in: .whitespacesAndNewlines))); "
                + "is a desktop session's bus there (DBUS_SESSION_BUS_ADDRESS)? Watching goes on.")
        }
    }
}
