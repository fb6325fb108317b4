import ListFetch

/// What the rules say about a list change, asked by `ListsController` before it acts. A list is an
/// entry people block (SPEC §1), and its URL's host is always allowed, so both removing a list and
/// adding one can open names a profile blocks.
public struct ListGuard: Sendable {
    /// Throws the refusal when removing the list would undo a rule that may not be undone yet.
    public var checkRemoval: @Sendable (ListName) async throws(ControlFailure) -> Void
    /// Throws when a list may not be fetched from `host` (lowercased, as allowed).
    public var checkSourceHost: @Sendable (String) async throws(ControlFailure) -> Void

    public init(checkRemoval: @escaping @Sendable (ListName) async throws(ControlFailure) -> Void,
                checkSourceHost: @escaping @Sendable (String) async throws(ControlFailure) -> Void) {
        self.checkRemoval = checkRemoval
        self.checkSourceHost = checkSourceHost
    }

    /// The engine's rules: removal as `unblock` would check it; a source host no entry lists.
    public static func rules(of engine: HelperEngine) -> ListGuard {
        ListGuard(
            checkRemoval: { name throws(ControlFailure) in
                do throws(EngineError) { try await engine.checkListRemoval(name.rawValue) } catch {
                    throw ControlFailure(error, now: await engine.trustedNow())
                }
            },
            checkSourceHost: { host throws(ControlFailure) in
                let entries = engine.entriesCovering(host: host)
                guard entries.isEmpty else {
                    throw .invalidArgument(
                        "\(host) is a name Scroll Off can block; a list can't be fetched from it "
                            + "(it belongs to \(entries.map(\.rawValue).joined(separator: ", "))). Use a URL on another host.")
                }
            })
    }
}
