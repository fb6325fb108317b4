import ArgumentParser

/// `scrolloff-dns`: the root helper. It runs in the foreground, as systemd expects (SPEC §13).
@main
struct ScrollOffDNS: AsyncParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "scrolloff-dns",
        abstract: "Scroll Off's helper: a DNS sinkhole that follows your schedules, credits and peeks.",
        subcommands: [Start.self]
    )
}

