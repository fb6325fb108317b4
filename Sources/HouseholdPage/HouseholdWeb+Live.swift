import ControlAPI
import ControlServer
import Engine
import Foundation
import HTTPTypes
import Hummingbird
import ScrollOffCore

/// The page without reloading (SPEC §9a, §9c): `GET /events` is the control socket's event
/// stream (`EventStreamBody`, the same events, ids and resumption) for what this browser may see
/// (a device: its own profile; a signed-in owner: every profile their uid may view, as the control
/// socket decides it), and `GET /live.js` the few lines that follow it. A script file, not inline,
/// so the page's Content-Security-Policy allows scripts from the page itself only; with scripts
/// off the page works as before, by reload.
extension HouseholdWeb {
    func addLive(to router: Router<WebContext>) {
        router.get("/live.js") { _, _ in
            var headers = WebResponses.securityHeaders
            headers[.contentType] = "text/javascript; charset=utf-8"
            return Response(status: .ok, headers: headers, body: .init(byteBuffer: ByteBuffer(string: LiveScript.source)))
        }
        router.get("/events") { request, context in try await liveEvents(request, context) }
    }

    func liveEvents(_ request: Request, _ context: WebContext) async throws -> Response {
        // Only an existing session: a stream is never where a session starts.
        guard let session = await sessions.find(request.cookies[WebSessions.cookieName]?.value) else {
            throw WebFailure(.unauthorized, "Open the page first; its live updates follow the page's session.")
        }
        do { try EventStreamBody.requireAccept(request.headers) } catch {
            throw WebFailure(.notAcceptable, error.error.message)
        }
        let after: Int64?
        do throws(WireRangeError) {
            after = try EventStream.resumeID(query: request.uri.queryParameters.get(ControlQuery.after.name).map { String($0) },
                                             header: request.headers[EventStreamBody.lastEventID])
        } catch { throw WebFailure(.badRequest, error.description) }
        let device = deviceProfile(context)
        // A user on this machine whose uid may not view the device's profile follows none of it.
        let mine: Set<String> = (try? await memberMay(.view, context)) == nil ? [] : [device]
        let owner = session.owner
        // Read again at each heartbeat: a sign-out or a changed household narrows it within one.
        let viewable: @Sendable () async -> Set<String> = {
            guard let owner, await sessions.find(session.id)?.owner != nil else { return mine }
            var names = mine
            for (name, _) in await engine.profileList() where await decide(owner, profile: name, action: .view) == .allowed {
                names.insert(name)
            }
            return names
        }
        var headers = WebResponses.securityHeaders
        headers[.contentType] = EventStream.mediaType
        for (name, value) in EventStreamBody.headers {
            if let field = HTTPField.Name(name) { headers[field] = value }
        }
        return Response(status: .ok, headers: headers,
                        body: EventStreamBody.body(engine: engine, profiles: await viewable(), after: after, profilesNow: viewable))
    }
}

/// `GET /live.js`: follows `/events` and keeps the page current without a reload. Countdowns
/// (`data-left`: seconds left when the page was drawn, measured on the helper's trusted clock, so
/// a device whose own clock is wrong still counts right) tick each second; when one reaches its end, or an event
/// arrives (a grant ended, a request answered, a new request for an owner, any change), the page's
/// `<main>` is fetched again and swapped in, unless someone is typing in a form there. The browser
/// reconnects by itself after a drop, sending the last id it got (`Last-Event-ID`).
enum LiveScript {
    static let source = #"""
"use strict";
(function () {
  var main = document.querySelector("main");
  if (!main || !window.EventSource || !window.fetch) return;
  var due = false;
  function typing() {
    var a = document.activeElement;
    return a && main.contains(a) && (a.tagName === "INPUT" || a.tagName === "TEXTAREA") && a.value;
  }
  function refresh() {
    if (typing()) { due = true; return; }
    due = false;
    fetch(location.href, { credentials: "same-origin" }).then(function (r) { return r.ok ? r.text() : null; }).then(function (html) {
      if (!html) return;
      var fresh = new DOMParser().parseFromString(html, "text/html").querySelector("main");
      if (fresh) { main.innerHTML = fresh.innerHTML; tick(); }
    });
  }
  function words(s) {
    if (s <= 0) return "now";
    var h = Math.floor(s / 3600), m = Math.floor(s % 3600 / 60), r = s % 60;
    return (h ? h + " h " : "") + (h || m ? m + " min " : "") + (h ? "" : r + " s");
  }
  function tick() {
    var ended = false;
    main.querySelectorAll("[data-left]").forEach(function (el) {
      if (!el.liveEnd) el.liveEnd = Date.now() + 1000 * Number(el.getAttribute("data-left"));
      var left = Math.ceil((el.liveEnd - Date.now()) / 1000);
      var shown = el.querySelector(".countdown");
      if (!shown) { shown = document.createElement("span"); shown.className = "countdown muted"; el.appendChild(shown); }
      shown.textContent = " · " + words(Math.max(0, left)) + " left";
      if (left <= 0 && !el.hasAttribute("data-ended")) { el.setAttribute("data-ended", ""); ended = true; }
    });
    if (ended || (due && !typing())) refresh();
  }
  var events = new EventSource("/events");
  events.onmessage = function () { refresh(); };
  tick();
  setInterval(tick, 1000);
})();
"""#
}
