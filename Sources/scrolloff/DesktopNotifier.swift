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
///
/// Each question about an event (a grant's end, an urge's rule and bypass) is asked of the event's
/// own profile unless `--profile` names one: a member of the household follows their profile,
/// not the default one they may not view (asked of the default, `status` was refused and the
/// grant's minute and the urge's plan were never told). Without `--profile`, a grant running
/// before `watch` started is told of from its profile's next event.
final class DesktopNotifier: @unchecked Sendable {
    static let program = "/usr/bin/notify-send"
    static let grantWarning: TimeInterval = 60
    static let episode: TimeInterval = 60

    /// A client for a question about `profile` (the `--profile` given wins).
    private let client: (String?) -> ControlClient
    private let lock = NSLock()
    /// Grant id → when to tell (this machine's clock), for grants not told of yet.
    private var grantReminders: [Int64: (at: Date, entry: String, profile: String?)] = [:]
    /// The profiles whose grants are followed: `--profile`'s, or the default and each profile seen in an event.
    private var profiles: Set<String?> = [nil]
    private var told: Set<Int64> = []
    /// Entry → when its last urge was told.
    private var urgesTold: [String: Date] = [:]
    private var failureShown = false
    private let localAddresses: Set<String>

    private init(client: @escaping (String?) -> ControlClient) {
        self.client = client
        localAddresses = Self.addressesOfThisMachine()
    }

    static func start(options: GlobalOptions) throws -> DesktopNotifier {
        guard FileManager.default.isExecutableFile(atPath: program) else {
            Terminal.printError("--notify needs \(program) (Debian: `apt install libnotify-bin`) and a desktop session's bus.")
            throw ExitCode(CLIExit.usage)
        }
        let notifier = DesktopNotifier { profile in
            ControlClient(socketPath: options.socketPath, timeoutSeconds: 15, profile: options.profile ?? profile)
        }
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
            refreshGrants(profile: event.profile)
        case "urge":
            urge(event)
        default:
            break
        }
    }

    // MARK: Grants

    /// Reads the grants of every profile followed again (after the helper was away).
    func refreshGrants() {
        for profile in lock.withLock({ profiles }) { refreshGrants(profile: profile) }
    }

    /// Reads `profile`'s running grants again (nil: `--profile`'s, or the default).
    func refreshGrants(profile: String?) {
        lock.withLock { _ = profiles.insert(profile) }
        guard let status = try? client(profile).call(ControlEndpoints.status) else { return }
        let here = Date()
        lock.withLock {
            grantReminders = grantReminders.filter { $0.value.profile != profile }
            for grant in status.grants where !told.contains(grant.id) {
                // Measured on the helper's clock (SPEC §11), then placed on this machine's.
                let seconds = Double((grant.end - status.now).milliseconds) / 1000 - Self.grantWarning
                grantReminders[grant.id] = (here.addingTimeInterval(max(0, seconds)), grant.entry, profile)
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
        let asked = self.client(event.profile)
        send("\(entry) is blocked", Self.urgeText(entry: entry, status: try? asked.call(ControlEndpoints.status),
                                                  preview: try? asked.call(ControlEndpoints.bypassPreview, query: [(ControlQuery.entry, entry)]),
                                                  profile: asked.profile))
    }

    /// "instagram is blocked until 07:00 · your plan: when bored, stretch · `scrolloff peek instagram` (1 free left)".
    /// - Parameter profile: the urge's profile; the command offered names it unless it is the default.
    static func urgeText(entry: String, status: StatusReport?, preview: BypassPreview?, profile: String? = nil) -> String {
        let flag = profile.map { $0 == "default" ? "" : " --profile \($0)" } ?? ""
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
                parts.append("`scrolloff peek \(entry)\(flag)` (\(preview.peeksLeftToday) free left)")
            case BypassPreview.paidPeek where (status?.balanceSeconds ?? 0) >= (preview.costSeconds ?? .max):
                parts.append("`scrolloff peek \(entry)\(flag)` (costs \(SpanWords.describe(seconds: preview.costSeconds ?? 0, rounding: .up)))")
            case BypassPreview.tokenOnly where preview.tokensLeftMonth > 0:
                parts.append("`scrolloff token \(entry)\(flag)` (\(preview.tokensLeftMonth) left this month)")
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
