import ArgumentParser
import ControlAPI
import ControlTransport
import Foundation
import ScrollOffCore
#if canImport(Glibc)
import Glibc
#endif

/// Following what happens as it happens (SPEC §9c): `scrolloff watch`.
enum LiveVerbs: VerbFeature {
    static var commands: [any ParsableCommand.Type] { [Watch.self] }
}

/// `scrolloff watch [--json] [--notify] [--after ID]`: the event stream (`GET /v1/events/stream`)
/// in the terminal, like `journalctl -f`. A lost connection is tried again, with waits growing to
/// 30 s, and resumes after the last event id it got, so nothing is missed or shown twice.
struct Watch: ParsableCommand {
    static let configuration = CommandConfiguration(
        abstract: "Follow what happens as it happens, like journalctl -f; --notify shows desktop notifications.")

    @OptionGroup var options: GlobalOptions

    @Option(name: .long, help: ArgumentHelp("Start after this event id (the `id` of `events --json`), so earlier events are shown first.", valueName: "ID"))
    var after: Int64?

    @Flag(name: .long, help: "Show desktop notifications (org.freedesktop.Notifications, through notify-send): a curfew in 10 minutes, a grant ending in 1 minute, a request answered, an urge on this machine met by a block.")
    var notify = false

    func validate() throws {
        if let after, after < 0 { throw ValidationError("--after is an event id, 0 or more; you gave \(after).") }
    }

    /// Longest wait for a byte: three heartbeats, so a helper that went silent is noticed.
    static let silence = Double(EventStream.heartbeatSeconds * 3)
    static let longestWait = 30.0

    func run() throws {
        let notifier = notify ? try DesktopNotifier.start(options: options) : nil
        var cursor = after
        var wait = 1.0
        var lost = false
        while true {
            do throws(ControlClientError) {
                try options.client(timeoutSeconds: Self.silence).followEvents(ControlEndpoints.eventStream, after: cursor, timeoutSeconds: Self.silence) {
                    message, id in
                    if lost {
                        Terminal.printError("Connected to the helper again; carrying on after event \(cursor.map(String.init) ?? "none").")
                        lost = false
                        // Grants may have started or ended while the helper was away.
                        notifier?.refreshGrants()
                    }
                    wait = 1
                    if let id, let number = Int64(id) { cursor = number }
                    switch message.event {
                    case "":
                        break
                    case EventStream.droppedEvent:
                        Terminal.printError("Fell behind the helper's events; catching up from event \(cursor.map(String.init) ?? "none").")
                    default:
                        guard let event = try? ControlJSON.decoder().decode(EventReport.self, from: Data(message.data.utf8)) else { return }
                        show(event)
                        notifier?.handle(event)
                    }
                }
            } catch {
                if case .refused = error {
                    options.report(error)
                    throw ExitCode(error.exitCode)
                }
                if !lost {
                    Terminal.printError("Lost the helper (\(error.description)); trying again, then carrying on after event \(cursor.map(String.init) ?? "none").")
                    lost = true
                }
            }
            usleep(useconds_t(wait * 1_000_000))
            wait = min(wait * 2, Self.longestWait)
        }
    }

    /// One event: a JSON object on one line with `--json`, else the `events` line with its profile.
    func show(_ event: EventReport) {
        if options.json {
            var data = ControlJSON.encode(event)
            data.append(0x0A)
            FileHandle.standardOutput.write(data)
        } else {
            let profile = event.profile.map { "[\($0)] " } ?? ""
            FileHandle.standardOutput.write(Data((profile + EventWords.line(event, now: TimeWords.now()) + "\n").utf8))
        }
    }
}
