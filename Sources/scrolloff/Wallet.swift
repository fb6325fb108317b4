import ArgumentParser
import ControlAPI

/// `scrolloff wallet`: credit to the second (SPEC §4).
struct Wallet: ParsableCommand {
    static let configuration = CommandConfiguration(abstract: "Show your credit: balance, earned and spent today.")

    @OptionGroup var options: GlobalOptions

    func run() throws {
        let wallet = try options.call(ControlEndpoints.wallet)
        options.emit(wallet) {
            let now = wallet.now ?? TimeWords.now()
            print("Balance \(Terminal.bold(TimeWords.balance(seconds: wallet.balanceSeconds))) · earned today "
                + "\(TimeWords.balance(seconds: wallet.earnedTodaySeconds)) · spent today \(TimeWords.balance(seconds: wallet.spentTodaySeconds))")
            if let next = wallet.nextAwardAt { print("Next credit at \(TimeWords.until(next, now: now)) while your blocks hold.") }
            if let frozen = wallet.earningFrozenUntil { print("Earning is paused until \(TimeWords.until(frozen, now: now)) after a clock change.") }
            for batch in wallet.batches where batch.remainingSeconds > 0 {
                let expires = batch.expiresAt.map { ", expires \(TimeWords.clock($0, now: now))" } ?? ""
                print("  \(TimeWords.balance(seconds: batch.remainingSeconds)) \(batch.origin)\(batch.earnedOn.map { " on \($0)" } ?? "")\(expires)")
            }
            for grant in wallet.grants {
                print("Open now: \(grant.entry) until \(TimeWords.until(grant.end, now: now))")
            }
        }
    }
}
