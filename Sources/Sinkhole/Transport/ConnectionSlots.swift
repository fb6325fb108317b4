import NIOConcurrencyHelpers

/// Open connections counted in total and per key (a client address for DNS over TCP, a uid for
/// the control socket), so that one client holding every slot cannot starve the others
/// (RFC 7766 §6.2.3: servers should bound connections, and may bound them per client).
public final class ConnectionSlots<Key: Hashable & Sendable>: Sendable {
    /// Why a connection was refused.
    public enum Refusal: Sendable, Equatable {
        /// Every slot of the server is taken.
        case total(limit: Int)
        /// This key already holds its share.
        case perKey(limit: Int)
    }

    private struct State {
        var open = 0
        var byKey: [Key: Int] = [:]
    }

    private let state = NIOLockedValueBox(State())
    public let limit: Int
    public let perKeyLimit: Int

    public init(limit: Int, perKeyLimit: Int) {
        self.limit = max(limit, 1)
        self.perKeyLimit = max(min(perKeyLimit, limit), 1)
    }

    /// Takes a slot for `key`; nil when taken, the refusal otherwise (nothing is taken then).
    public func acquire(_ key: Key) -> Refusal? {
        state.withLockedValue { state in
            if state.open >= limit { return .total(limit: limit) }
            let held = state.byKey[key, default: 0]
            if held >= perKeyLimit { return .perKey(limit: perKeyLimit) }
            state.open += 1
            state.byKey[key] = held + 1
            return nil
        }
    }

    /// Gives back a slot `acquire` gave `key`.
    public func release(_ key: Key) {
        state.withLockedValue { state in
            state.open -= 1
            let held = state.byKey[key, default: 1] - 1
            state.byKey[key] = held > 0 ? held : nil
        }
    }

    public var current: Int { state.withLockedValue { $0.open } }

    public func current(for key: Key) -> Int { state.withLockedValue { $0.byKey[key, default: 0] } }
}
