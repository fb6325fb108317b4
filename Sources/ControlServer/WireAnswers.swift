import ControlAPI
import Store

// The engine answers in domain values; the control API's wire types are made from them here, at
// the edge, so the engine does not know the wire (docs/architecture.md, Engine). Alternatives are
// the first; docs/architecture.md lists the answers that are still wire types in the engine.

extension AlternativeReport {
    /// An alternative as `alternatives add` and `alternatives list` answer it: without its
    /// profile, which the caller named.
    init(_ alternative: Alternative) {
        self.init(id: alternative.id, text: alternative.text, created: alternative.created)
    }
}
