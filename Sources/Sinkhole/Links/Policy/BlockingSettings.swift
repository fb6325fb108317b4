import Synchronization

/// How a blocked name is answered: the mode of SPEC §9 (`null`, `nxdomain`, `refused`) and the TTL
/// of the blocked answer (SPEC §9 "blocked answers at most 10 s").
public struct BlockingSettings: Sendable, Equatable {
    public var mode: BlockingMode
    /// 1…`PolicyDecision.maximumBlockedTTL` seconds.
    public var blockedTTL: UInt32

    public init(mode: BlockingMode = .null, blockedTTL: UInt32 = PolicyDecision.maximumBlockedTTL) {
        self.mode = mode
        self.blockedTTL = min(max(blockedTTL, 1), PolicyDecision.maximumBlockedTTL)
    }

    /// The TTL for a blocked answer whose decision carries `cap` (nil = no cap of its own): never
    /// more than the configured TTL, so a smaller setting applies to managed entries too.
    @inline(__always) public func ttl(cap: UInt32?) -> UInt32 {
        min(cap ?? blockedTTL, blockedTTL)
    }
}

/// The blocking settings in force, swapped by a configuration reload and read by the links for
/// every blocked answer.
///
/// Both fields fit one 64-bit word, so a read is one relaxed atomic load: no lock and no
/// allocation on the hot path, and a reader never sees a mode from one reload with a TTL from
/// another.
public final class BlockingSettingsStore: Sendable {
    private let packed: Atomic<UInt64>

    public init(_ settings: BlockingSettings = BlockingSettings()) {
        packed = Atomic(Self.pack(settings))
    }

    /// Settings that start as `mode` with the SPEC's 10 s TTL (tests, tools, the diagnostic chain).
    public convenience init(mode: BlockingMode) {
        self.init(BlockingSettings(mode: mode))
    }

    public var current: BlockingSettings {
        Self.unpack(packed.load(ordering: .relaxed))
    }

    public func replace(with settings: BlockingSettings) {
        packed.store(Self.pack(settings), ordering: .relaxed)
    }

    private static let modes = BlockingMode.allCases

    private static func pack(_ settings: BlockingSettings) -> UInt64 {
        let index = modes.firstIndex(of: settings.mode) ?? 0
        return UInt64(index) << 32 | UInt64(settings.blockedTTL)
    }

    private static func unpack(_ word: UInt64) -> BlockingSettings {
        let index = Int(word >> 32)
        let mode = index < modes.count ? modes[index] : .null
        return BlockingSettings(mode: mode, blockedTTL: UInt32(truncatingIfNeeded: word))
    }
}
