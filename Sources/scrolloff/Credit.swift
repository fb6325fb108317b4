import ArgumentParser
import ControlAPI

/// Credit: the wallet, spending it, peeks and emergency tokens (SPEC §4, §5).
enum CreditVerbs: VerbFeature {
    static var commands: [any ParsableCommand.Type] { [Wallet.self, Use.self, Stop.self, Peek.self, Token.self] }
}

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

/// `scrolloff use ENTRY [--for DURATION] [--task TEXT]`: spend credit to open a blocked entry (SPEC §4).
struct Use: ParsableCommand {
    static let configuration = CommandConfiguration(abstract: "Spend credit to open a blocked entry, paid per second until you stop.")

    @OptionGroup var options: GlobalOptions

    @Argument(help: "What to open, such as instagram.")
    var entry: String

    @Option(name: .customLong("for"), help: ArgumentHelp("At most this long: 45m, 2h, 1h30, 90s, 10 minutes.", valueName: "duration"),
            transform: DurationArgument.reading)
    var length: DurationArgument?

    @Option(name: .long, help: "What you are opening it for; shown while it runs.")
    var task: String?

    func run() throws {
        let planShown = try BypassFlow.showPlanFirst(options, entry: entry) != nil
        let answer = try options.call(ControlEndpoints.use,
                                      GrantRequest(entry: entry, forSeconds: try length.map { try SpendLimitSeconds($0.seconds, field: "--for") }, task: task))
        options.emit(answer) { GrantWords.print(answer, planShown: planShown) }
    }
}

/// `scrolloff stop [ENTRY]`: end the running spend; nothing more is deducted (SPEC §4). Peeks and
/// tokens are not spends: they run to their end (the helper refuses with when that is).
struct Stop: ParsableCommand {
    static let configuration = CommandConfiguration(
        abstract: "Stop spending: close what `use` opened.",
        discussion: "Only spends stop early. A peek or token runs to its end, and `stop` says when that is.")

    @OptionGroup var options: GlobalOptions

    @Argument(help: "Which entry (default: every running spend).")
    var entry: String?

    func run() throws {
        let answer = try options.call(ControlEndpoints.stop, GrantRequest(entry: entry))
        options.emit(answer) {
            // The helper's sentence says what stopped, for how long, and what runs on.
            print(answer.message)
            print("Balance \(Terminal.bold(TimeWords.balance(seconds: answer.balanceSeconds))).")
        }
    }
}

/// `scrolloff peek ENTRY [--task TEXT]`: a short look (SPEC §5 steps 1–2).
struct Peek: ParsableCommand {
    static let configuration = CommandConfiguration(
        abstract: "Take a short peek at a blocked entry; the first ones each day are free, later ones cost credit.",
        discussion: "How long a peek lasts, how many are free and how many more you may pay for come from your preset and its knobs "
            + "(peek_length, free_peeks_per_day, paid_peeks_per_day, paid_peek_cost); `scrolloff status` shows the peeks left today."
    )

    @OptionGroup var options: GlobalOptions

    @Argument(help: "What to peek at, such as instagram.")
    var entry: String

    @Option(name: .long, help: "What you are peeking for; shown while it runs.")
    var task: String?

    @Flag(name: .long, help: "Do not offer the short exercise first.")
    var skipExercise = false

    func run() throws {
        try BypassFlow(kind: .peek, entry: entry, task: task, skipExercise: skipExercise, options: options).run()
    }
}

/// `scrolloff token ENTRY [--task TEXT]`: an emergency token (SPEC §5 step 4). Its help names no
/// number: the count and length come from the preset and knobs (a help that said "5 per month"
/// was false under a preset that gives 0).
struct Token: ParsableCommand {
    static let configuration = CommandConfiguration(
        abstract: "Use an emergency token: it opens a blocked entry for a while.",
        discussion: "How many tokens you get each month and how long one opens an entry come from your preset and its knobs "
            + "(tokens_per_month, token_length); `scrolloff status` shows the tokens left this month."
    )

    @OptionGroup var options: GlobalOptions

    @Argument(help: "What to open, such as instagram.")
    var entry: String

    @Option(name: .long, help: "What you need it for; shown while it runs.")
    var task: String?

    @Flag(name: .long, help: "Do not offer the short exercise first.")
    var skipExercise = false

    func run() throws {
        try BypassFlow(kind: .token, entry: entry, task: task, skipExercise: skipExercise, options: options).run()
    }
}
