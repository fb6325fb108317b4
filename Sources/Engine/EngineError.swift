import DomainLists
import Enforcement
import ScrollOffCore
import Store

/// Why an engine command did nothing. The control API maps these to its answers and the CLI's
/// exit codes (SPEC §13): `refused` → 1, `invalid`/`notFound` → 2, `storage`/`catalog` → helper trouble.
public enum EngineError: Error, Hashable, Sendable, CustomStringConvertible {
    /// A rule said no; the refusal says which rule and when it opens again.
    case refused(Refusal)
    /// The request cannot be carried out as written; the text says what to change.
    case invalid(String)
    /// The request names something that does not exist (an entry, schedule, plan or profile).
    case notFound(String)
    /// The database refused the commit; nothing was applied. The text comes from the store.
    case storage(String)
    /// The curated catalog could not be read at start-up.
    case catalog(String)
    /// The database stopped answering after the commit was sent: the change may or may not have
    /// been applied. The text comes from the store and says how to find out.
    case outcomeUnknown(String)

    public var description: String {
        switch self {
        case .refused(let r): r.message
        case .invalid(let text), .notFound(let text): text
        case .storage(let text): "The state database refused the change, so nothing was changed: \(text)"
        case .catalog(let text): "The service catalog could not be read: \(text)"
        case .outcomeUnknown(let text): "The change may or may not have been saved: \(text)."
        }
    }

    /// The refusal, when this is one.
    public var refusal: Refusal? {
        if case .refused(let r) = self { return r }
        return nil
    }

    init(_ error: CreditError) {
        switch error {
        case .refused(let r): self = .refused(r)
        case .invalid(let text): self = .invalid(text)
        }
    }

    init(_ error: StoreError) {
        if case .commitOutcomeUnknown = error { self = .outcomeUnknown(error.description) } else { self = .storage(error.description) }
    }

    init(_ error: ClientNetworkError) { self = .invalid(error.description) }
}

extension ClientNetwork {
    /// The networks among a profile's client texts (MAC addresses are routed by the neighbour
    /// table, not by prefix), or the first text that is neither, as an engine error.
    static func networks(in clients: [String]) throws(EngineError) -> [ClientNetwork] {
        var networks: [ClientNetwork] = []
        for text in clients where MACAddress.parse(text) == nil {
            do { networks.append(try ClientNetwork(parsing: text)) } catch { throw EngineError(error) }
        }
        return networks
    }
}
