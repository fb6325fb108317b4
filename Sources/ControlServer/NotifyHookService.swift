import ControlAPI
import Engine
import Foundation
import ServiceLifecycle
import Store

/// Owners are told of a new request for time (SPEC §9a) through `[notify] command`: this reads
/// the engine's live event feed (every profile) and hands each `timeRequested` event, as the
/// stream's JSON (`EventReport`), to `HelperEngine.deliverNotifyHook`, which runs the program like
/// the digest's hook (no shell, the JSON on standard input, a time-out, ended at the helper's stop).
/// A reader of the feed rather than a call in the request's handler, so a request made on the
/// household page or the CLI, or any later way, is told of the same.
public struct NotifyHookService: Service {
    let engine: HelperEngine

    public init(engine: HelperEngine) { self.engine = engine }

    public func run() async throws {
        // Nothing to finish at a stop: the feed's reader ends at once (running hooks are the engine's to end).
        try? await cancelWhenGracefulShutdown { await follow() }
    }

    private func follow() async {
        var last = (try? await engine.latestEventID()) ?? 0
        while !Task.isCancelled {
            let subscription = engine.eventFeed.subscribe(profiles: Set(await engine.profileAccess().keys))
            // What came between the last one seen and the subscription (after a drop: what it missed).
            let missed = (try? await engine.events(after: last, profiles: Set(await engine.profileAccess().keys), limit: 1000)) ?? []
            for event in missed { await tell(event, last: &last) }
            await withTaskCancellationHandler {
                for await item in subscription.items {
                    guard case .events(let events) = item else { continue }
                    for shared in events { await tell(shared.event, last: &last) }
                }
            } onCancel: { subscription.cancel() }
            // The feed let this reader go (it fell behind) or the helper is stopping.
            if !subscription.overflowed { return }
        }
    }

    private func tell(_ event: StoredEvent, last: inout Int64) async {
        guard let id = event.id, id > last else { return }
        last = id
        guard event.kind == .timeRequested else { return }
        var json = ControlJSON.encode(EventReport(event))
        json.append(0x0A)
        await engine.deliverNotifyHook(json: json, event: event)
    }
}
