import Engine
import ListFetch
import ServiceKit

/// What the rules say about a list change, asked by `ListsController` before it acts. A list is an
/// entry people block (SPEC §1), and its URL's host is always allowed, so both removing a list and
/// adding one can open names a profile blocks.
public struct ListGuard: Sendable {
    /// Throws the refusal when removing the list would undo a rule that may not be undone yet.
    public var checkRemoval: @Sendable (ListName) async throws(ControlFailure) -> Void
    /// Throws when a list may not be fetched from `host` (lowercased, as allowed).
    public var checkSourceHost: @Sendable (String) async throws(ControlFailure) -> Void
    /// The rule holding the list now, if any, asked before every refresh: while one holds it, a
    /// refresh may add names but not drop them (SPEC §3). Unlike `checkRemoval` it records no
    /// refusal event: a refresh is not a person's attempt to undo a rule.
    public var holdOf: @Sendable (ListName) async -> ControlFailure?
    /// Told after a list was added (true) or removed (false), with its URL, so the change is
    /// recorded as an event with who made it (SPEC §12).
    public var changed: @Sendable (Bool, ListName, String) async -> Void

    public init(checkRemoval: @escaping @Sendable (ListName) async throws(ControlFailure) -> Void,
                checkSourceHost: @escaping @Sendable (String) async throws(ControlFailure) -> Void,
                holdOf: (@Sendable (ListName) async -> ControlFailure?)? = nil,
                changed: @escaping @Sendable (Bool, ListName, String) async -> Void = { _, _, _ in }) {
        self.checkRemoval = checkRemoval
        self.checkSourceHost = checkSourceHost
        self.changed = changed
        self.holdOf = holdOf ?? { name in
            do throws(ControlFailure) { try await checkRemoval(name); return nil } catch { return error }
        }
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
            },
            holdOf: { name in
                guard let refusal = await engine.listHold(name.rawValue) else { return nil }
                return ControlFailure(.refused(refusal), now: await engine.trustedNow())
            },
            changed: { added, name, url in await engine.recordListChange(added: added, name: name.rawValue, url: url) })
    }
}
