import Store

extension HelperEngine {
    /// The change a commit writes: the held start-up bookkeeping (if a full disk refused it) first,
    /// then `change`, so ledger rows and account saves land in the order they happened.
    static func joined(_ held: StateChange?, _ change: StateChange) -> StateChange {
        guard let held else { return change }
        return StateChange(held.operations + change.operations)
    }

    /// `receipt` without the ids of the rows `held` appended: callers read the ids of their own rows.
    static func receipt(_ receipt: CommitReceipt, dropping held: StateChange) -> CommitReceipt {
        var ledger = 0, events = 0, plans = 0, alternatives = 0
        for op in held.operations {
            switch op {
            case .appendLedger: ledger += 1
            case .appendEvent: events += 1
            case .addPlan: plans += 1
            case .addAlternative: alternatives += 1
            default: break
            }
        }
        var out = receipt
        out.ledgerIDs = Array(receipt.ledgerIDs.dropFirst(ledger))
        out.eventIDs = Array(receipt.eventIDs.dropFirst(events))
        out.planIDs = Array(receipt.planIDs.dropFirst(plans))
        out.alternativeIDs = Array(receipt.alternativeIDs.dropFirst(alternatives))
        return out
    }
}
