/// A profile's wallet and bypass ladder together: the one object the helper keeps per profile.
/// Every method forwards to `Wallet` or `BypassLadder`; see those for the rules.
public struct CreditAccount: Sendable {
    public private(set) var wallet: Wallet
    public private(set) var ladder: BypassLadder

    public init(state: CreditAccountState, policy: CreditPolicy) {
        wallet = Wallet(state: state.wallet, policy: policy)
        ladder = BypassLadder(state: state.ladder)
    }

    /// What to persist with every commit.
    public var state: CreditAccountState { CreditAccountState(wallet: wallet.state, ladder: ladder.state) }

    /// Knobs and zone; assign after a configuration reload.
    public var policy: CreditPolicy {
        get { wallet.policy }
        set { wallet.policy = newValue }
    }

    public mutating func advance(to t: Instant, blockInForce: Bool) -> CreditOutcome {
        wallet.advance(to: t, blockInForce: blockInForce)
    }

    public mutating func resume(at t: Instant, blockInForce: Bool, lastRun: Instant? = nil) -> CreditOutcome {
        wallet.resume(at: t, blockInForce: blockInForce, lastRun: lastRun)
    }

    /// The trusted clock was moved back to `t` (SPEC §11 clock recovery): see ``Wallet/rewind(to:)``.
    public mutating func rewind(to t: Instant) -> CreditOutcome { wallet.rewind(to: t) }

    public mutating func grantStarter(at t: Instant) -> CreditOutcome { wallet.grantStarter(at: t) }

    public mutating func freezeEarning(until: Instant, at t: Instant) -> CreditOutcome {
        wallet.freezeEarning(until: until, at: t)
    }

    public mutating func use(_ entry: EntryID, for limit: Span? = nil, task: String? = nil, at t: Instant,
                             curfewEndsAt: Instant? = nil) throws(CreditError) -> CreditOutcome {
        try wallet.use(entry, for: limit, task: task, at: t, curfewEndsAt: curfewEndsAt)
    }

    public mutating func endSpend(at t: Instant, reason: CreditEvent.GrantEndReason) -> CreditOutcome {
        wallet.endSpend(at: t, reason: reason)
    }

    public mutating func stop(_ entry: EntryID?, at t: Instant) throws(Refusal) -> CreditOutcome {
        try wallet.stop(entry, at: t)
    }

    public mutating func peek(_ entry: EntryID, task: String? = nil, at t: Instant,
                              curfewEndsAt: Instant? = nil) throws(Refusal) -> CreditOutcome {
        try ladder.peek(entry, task: task, at: t, curfewEndsAt: curfewEndsAt, wallet: &wallet)
    }

    public mutating func token(_ entry: EntryID, task: String? = nil, at t: Instant,
                               curfewEndsAt: Instant? = nil) throws(Refusal) -> CreditOutcome {
        try ladder.token(entry, task: task, at: t, curfewEndsAt: curfewEndsAt, wallet: &wallet)
    }

    public mutating func earmark(_ seconds: Int64, for entry: EntryID, at t: Instant) throws(CreditError) -> CreditOutcome {
        try wallet.earmark(seconds, for: entry, at: t)
    }

    public mutating func releaseEarmark(for entry: EntryID, at t: Instant) -> CreditOutcome {
        wallet.releaseEarmark(for: entry, at: t)
    }

    public mutating func adjust(_ seconds: Int64, note: String, at t: Instant) throws(CreditError) -> CreditOutcome {
        try wallet.adjust(seconds, note: note, at: t)
    }

    /// The numbers of `scrolloff wallet` and `status` (SPEC §13 `--json` fields), as of the last
    /// operation; call `advance` first for an up-to-the-second answer.
    public func status(at t: Instant) -> CreditStatus {
        let today = wallet.today(at: t)
        return CreditStatus(
            balanceSeconds: wallet.balanceSeconds,
            earnedTodaySeconds: today.earnedSeconds,
            spentTodaySeconds: today.spentSeconds,
            peeksLeftToday: ladder.peeksLeftToday(at: t, policy: policy),
            tokensLeftThisMonth: ladder.tokensLeftThisMonth(at: t, policy: policy),
            nextAwardAt: wallet.nextAwardAt,
            earningFrozenUntil: wallet.earningFrozen(at: t),
            grantsInUse: wallet.grantsInUse)
    }
}

/// The persisted state of a `CreditAccount`.
public struct CreditAccountState: Hashable, Sendable, Codable {
    public var wallet: WalletState
    public var ladder: LadderState

    public init(wallet: WalletState, ladder: LadderState = LadderState()) {
        self.wallet = wallet
        self.ladder = ladder
    }

    /// A fresh account whose first trusted instant is `asOf`.
    public init(asOf: Instant) { self.init(wallet: WalletState(asOf: asOf)) }
}

/// A snapshot of the numbers people see.
public struct CreditStatus: Hashable, Sendable, Codable {
    public var balanceSeconds: Int64
    public var earnedTodaySeconds: Int64
    public var spentTodaySeconds: Int64
    public var peeksLeftToday: Int
    public var tokensLeftThisMonth: Int
    public var nextAwardAt: Instant?
    public var earningFrozenUntil: Instant?
    public var grantsInUse: [Grant]
}
