import ControlAPI
import Engine
import Foundation
import HTTPTypes
import Hummingbird
import NIOCore
import ScrollOffCore
import ServiceKit
import Store

/// SPEC §12's endpoints: `GET /v1/export/rows`, the export as typed JSON rows
/// (`scrolloff export --json`; the CSV stays at `GET /v1/export`), and `GET /v1/events/stream`,
/// the event log live (`scrolloff watch`).
enum EventLogRoutes {
    static func add(to router: inout ControlRouter, engine: HelperEngine, authorizer: any ControlAuthorizer) {
        // The rows of every profile the caller may view, as the CSV (SPEC §11).
        router.add(ControlEndpoints.exportRows) { r in
            let profiles = await ViewableProfiles.of(r.caller, engine: engine, authorizer: authorizer)
            return try await engineAnswer(engine) { () async throws(EngineError) in ExportRowsResponse(rows: try await engine.exportRows(profiles: profiles).map(ExportRowReport.init)) }
        }
        // Open to the router: the events of every profile the caller may view (SPEC §9a: never
        // another's), or of the one `?profile=` names when the caller may view it.
        router.add(ControlEndpoints.eventStream) { r in
            try EventStreamBody.requireAccept(r.headers)
            let after: Int64?
            do throws(WireRangeError) {
                after = try EventStream.resumeID(query: r.query[ControlQuery.after], header: r.headers[EventStreamBody.lastEventID])
            } catch { throw ControlFailure(error) }
            let named = r.query.nonEmpty(ControlQuery.profile)
            let caller = r.caller
            let viewable: @Sendable () async -> Set<String> = {
                let all = await ViewableProfiles.of(caller, engine: engine, authorizer: authorizer)
                return named.map { all.contains($0) ? [$0] : [] } ?? all
            }
            let profiles = await viewable()
            if profiles.isEmpty {
                throw ControlFailure.forbidden(named.map { "You may not view profile “\($0)”; its owners and members may (`owners`/`members` in its [profiles] section)." }
                    ?? "You are not an owner or member of any profile, so there are no events for you to follow; ask root to name you in one.")
            }
            return .body(contentType: EventStream.mediaType, headers: EventStreamBody.headers,
                         EventStreamBody.body(engine: engine, profiles: profiles, after: after, profilesNow: viewable))
        }
    }
}

/// The body of an event stream (the control socket's and the household page's): what happened
/// since `after` from the event log, then each event as the engine commits it (`EventFeed`),
/// heartbeats between, and a `dropped` notice when the reader fell too far behind.
public enum EventStreamBody {
    public static let lastEventID = HTTPField.Name(EventStream.lastEventIDHeader)!
    /// No cache may keep or transform a live stream, and nginx-like proxies must not buffer it.
    public static let headers: [(String, String)] = [("Cache-Control", "no-store"), ("X-Accel-Buffering", "no")]

    /// A 406 unless the request accepts `text/event-stream` (what `EventSource` sends): a plain
    /// GET would otherwise hang on an answer that never ends.
    public static func requireAccept(_ headers: HTTPFields) throws(ControlFailure) {
        let accepts = headers[values: .accept].contains { value in
            value.split(separator: ",").contains { $0.trimmingCharacters(in: .whitespaces).lowercased().hasPrefix(EventStream.mediaType) }
        }
        guard accepts else {
            throw ControlFailure(status: .notAcceptable, code: ControlErrorCode.notAcceptable,
                                 message: "The event stream is Server-Sent Events that never end: ask with `Accept: \(EventStream.mediaType)` "
                                     + "(`curl -N -H 'Accept: \(EventStream.mediaType)' …`), or follow it with `scrolloff watch`.")
        }
    }

    /// - Parameters:
    ///   - profiles: the profiles the reader may view now; `profilesNow` reads them again at each
    ///     heartbeat, so a member taken off a profile stops seeing it within one.
    ///   - after: the last event id the reader has; nil sends only what happens from now on.
    public static func body(engine: HelperEngine, profiles initial: Set<String>, after: Int64?,
                            heartbeat: Duration = .seconds(EventStream.heartbeatSeconds),
                            profilesNow: @escaping @Sendable () async -> Set<String>) -> ResponseBody {
        ResponseBody { writer in
            // A new reader starts at the newest event written; read before subscribing, and the
            // catch-up below reads from it after, so an event committed in between is not missed.
            var last: Int64
            if let after { last = after } else {
                do throws(EngineError) { last = try await engine.latestEventID() } catch { throw ControlFailure(error) }
            }
            // Subscribed before the catch-up read, so nothing committed in between is missed;
            // what both hold is sent once (ids only grow).
            let subscription = engine.eventFeed.subscribe(profiles: initial)
            defer { subscription.cancel() }
            var profiles = initial
            try await writer.write(text: "retry: \(EventStream.retryMilliseconds)\n" + EventStream.comment("scrolloff-dns events"))
            while true {
                let page: [StoredEvent]
                do throws(EngineError) { page = try await engine.events(after: last, profiles: profiles, limit: EventStream.resumePage) } catch {
                    throw ControlFailure(error)
                }
                var text = ""
                for event in page {
                    guard let id = event.id else { continue }
                    text += message(event)
                    last = id
                }
                if !text.isEmpty { try await writer.write(text: text) }
                if page.count < EventStream.resumePage { break }
            }
            // Caught up. The id alone (no data) is the reader's cursor without an event (the HTML
            // standard sets `lastEventId` on it), so a reader that hears nothing more still
            // resumes from here; from now on each event is sent as it is committed.
            try await writer.write(text: "id: \(last)\n\n" + EventStream.comment("live"))
            let ticker = Task {
                while !Task.isCancelled {
                    try? await Task.sleep(for: heartbeat)
                    subscription.heartbeat()
                }
            }
            defer { ticker.cancel() }
            for await item in subscription.items {
                switch item {
                case .events(let events):
                    // One write per commit, however many events it holds; each event's text is
                    // made once for every reader (`FeedEvent`).
                    var text = ""
                    var count = 0
                    for shared in events {
                        guard let id = shared.event.id, id > last, EventFeed.visible(shared.event, to: profiles) else { continue }
                        text += shared.text(message)
                        last = id
                        count += 1
                    }
                    if !text.isEmpty {
                        try await writer.write(text: text)
                        subscription.sent(count)
                    }
                case .heartbeat:
                    let now = await profilesNow()
                    if now != profiles {
                        profiles = now
                        subscription.update(profiles: now)
                    }
                    try await writer.write(text: EventStream.comment("heartbeat"))
                }
            }
            if subscription.overflowed {
                let notice = EventStreamDropped(
                    lastID: last,
                    message: "You fell \(EventFeed.defaultBuffer) commits' events behind and were let go; reconnect with `Last-Event-ID: \(last)` "
                        + "(or `?\(ControlQuery.after.name)=\(last)`) to get the rest.")
                try await writer.write(text: EventStream.message(id: nil, event: EventStream.droppedEvent,
                                                                 data: String(decoding: ControlJSON.encode(notice), as: UTF8.self)))
            }
            try await writer.finish(nil)
        }
    }

    /// One event as an SSE message: its row id, and its `EventReport` as the `events` endpoint has it.
    static func message(_ event: StoredEvent) -> String {
        EventStream.message(id: event.id, data: String(decoding: ControlJSON.encode(EventReport(event)), as: UTF8.self))
    }
}

extension ResponseBodyWriter {
    mutating func write(text: String) async throws {
        try await write(ByteBuffer(string: text))
    }
}
