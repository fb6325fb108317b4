import ControlAPI
import Engine
import ListFetch
import ServiceKit
import Store

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
    /// Throws when a new list may not take this name (a word the catalog already gives a meaning).
    public var checkName: @Sendable (ListName) async throws(ControlFailure) -> Void = { _ in }
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

    /// The household's lists kept in the state (nil: this helper's files alone, as in unit tests).
    public var registry: ListRegistry?

    /// The engine's rules: removal as `unblock` would check it; a source host no entry lists.
    public static func rules(of engine: HelperEngine) -> ListGuard {
        var rules = ListGuard(
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
        rules.registry = .household(of: engine)
        rules.checkName = { name throws(ControlFailure) in
            guard let meaning = engine.catalogMeaning(of: name.rawValue) else { return }
            throw .invalidArgument("'\(name)' is \(meaning) in Scroll Off's catalog, so `block \(name)` would never mean this list. "
                + "Pick another --name, such as \(name)-list.")
        }
        return rules
    }
}

/// Which lists the household has, kept in the state (`ListSource`): one helper adds or removes a
/// list and every helper of the store follows, each downloading its own copy.
public struct ListRegistry: Sendable {
    /// The household's lists now.
    public var sources: @Sendable () async -> [ListSource]
    /// This helper's name in the household (`[store] node`; empty for a helper alone).
    public var node: String
    /// Where the state lives: this helper's lists from before are carried in once per location.
    public var location: String = ""
    /// Adds a list (with its event), once its first download here passed, unless the household
    /// has `ListBound.maxLists` lists already (counting the given number this helper has alone),
    /// asked in the commit's decision so helpers adding at once cannot pass the bound together.
    public var add: @Sendable (ListSource, ListBound, Int) async throws(ControlFailure) -> Void
    /// Removes a list (with its event), asking the rules again; false when it was not the household's.
    /// Removes a list for the household; refused when a profile outside the set given (those
    /// whose rights were checked) names it by the commit.
    public var remove: @Sendable (ListName, Set<String>?) async throws(ControlFailure) -> Bool
    /// Carries this helper's lists from before into the state, once.
    public var carryIn: @Sendable ([ListSource]) async throws(ControlFailure) -> Void
    /// What the household holds of each list a refresh shrank under a lock, as this helper last
    /// heard (a summary; no names).
    public var held: @Sendable () async -> [HeldListSummary] = { [] }
    /// The names the household holds of a list, read now.
    public var heldNames: @Sendable (ListName) async throws(ControlFailure) -> HeldListNames? = { _ in nil }
    /// Makes names a refresh here held (rule lines) the household's too, as a union with what it
    /// holds; nil when no rule holds the list any more.
    public var holdNames: @Sendable (ListName, [String]) async throws(ControlFailure) -> HeldListSummary? = { _, _ in nil }
    /// Lets the household's held names of a list go, decided on its latest state; the rule that
    /// still holds the list when one does.
    public var releaseHeld: @Sendable (ListName) async throws(ControlFailure) -> ListHold? = { _ in nil }

    public init(sources: @escaping @Sendable () async -> [ListSource], node: String,
                add: @escaping @Sendable (ListSource, ListBound, Int) async throws(ControlFailure) -> Void,
                remove: @escaping @Sendable (ListName, Set<String>?) async throws(ControlFailure) -> Bool,
                carryIn: @escaping @Sendable ([ListSource]) async throws(ControlFailure) -> Void) {
        self.sources = sources
        self.node = node
        self.add = add
        self.remove = remove
        self.carryIn = carryIn
    }

    /// The engine's: every change is one commit, versioned and heard by the other helpers.
    public static func household(of engine: HelperEngine) -> ListRegistry {
        var registry = ListRegistry(
            sources: { await engine.listSources }, node: engine.storeNodeName,
            add: { source, bound, besides throws(ControlFailure) in
                let refusedAt: Int?
                do throws(EngineError) { refusedAt = try await engine.addListSource(source, mostLists: bound.maxLists, besides: besides) } catch {
                    if case .invalid(let text) = error {
                        throw ControlFailure(status: .conflict, code: ControlErrorCode.listExists, message: text)
                    }
                    throw ControlFailure(error, now: await engine.trustedNow())
                }
                guard let refusedAt else { return }
                if let name = try? ListName(source.name) {
                    do throws(ListBoundExceeded) { try bound.checkNewList(name, existing: refusedAt) } catch { throw .invalidArgument(error.message) }
                }
                throw .invalidArgument("\(refusedAt) lists are in force, the household's bound of \(bound.maxLists) ([lists] max_lists); list '\(source.name)' was not added.")
            },
            remove: { name, checked throws(ControlFailure) in
                do throws(EngineError) { return try await engine.removeListSource(name.rawValue, checkedProfiles: checked) } catch {
                    throw ControlFailure(error, now: await engine.trustedNow())
                }
            },
            carryIn: { sources throws(ControlFailure) in
                do throws(EngineError) { try await engine.carryInListSources(sources) } catch {
                    throw ControlFailure(error, now: await engine.trustedNow())
                }
            })
        registry.location = engine.storeLocation
        registry.held = { await engine.heldLists }
        registry.heldNames = { name throws(ControlFailure) in
            do throws(EngineError) { return try engine.heldListNames(name.rawValue) } catch {
                throw ControlFailure(error, now: await engine.trustedNow())
            }
        }
        registry.holdNames = { name, rules throws(ControlFailure) in
            do throws(EngineError) { return try await engine.holdListNames(name.rawValue, rules: rules) } catch {
                throw ControlFailure(error, now: await engine.trustedNow())
            }
        }
        registry.releaseHeld = { name throws(ControlFailure) in
            do throws(EngineError) {
                return try await engine.releaseListNames(name.rawValue).map { ListHold(until: $0.opensAt, reason: $0.message) }
            } catch {
                throw ControlFailure(error, now: await engine.trustedNow())
            }
        }
        return registry
    }
}
