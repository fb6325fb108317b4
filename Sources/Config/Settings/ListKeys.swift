import ControlServer
import Engine
import ScrollOffCore
import Sinkhole

/// `[lists]` and `[[lists.source]]`: downloaded lists (SPEC §1, §11).
public enum ListKeys {
    public static let catalog = Setting(
        .lists, "catalog", .text, default: .value("\"\""),
        allowed: "\"\" (found next to the install) or the absolute path of the blocklists folder",
        doc: "The curated lists folder (blocklists/); \"\" = found next to the install or in the source tree.",
        reload: .restart(\.catalogPath))
    public static let refreshPeriod = Setting(
        .lists, "refresh_period", .duration(.minutes(15) ... .hours(24 * 30)), default: .value("\"24h\""),
        allowed: "15min to 30d",
        doc: "How often downloaded lists are fetched again (list servers rate-limit clients; lists rarely change faster).",
        reload: .applies(\.listRefreshPeriod))
    /// Who may add which sources: applied together.
    static let sourceRules = ReloadPart.applies(\.listSourceRules)
    public static let memberFileFolders = Setting(
        .lists, "member_file_folders", .texts, default: .value("[]"),
        allowed: "absolute folder paths such as [\"/srv/scrolloff-lists\"], without . or .. parts",
        doc: "The folders under which a member of group scrolloff may add a file:// list (none by default).",
        reload: sourceRules)
    public static let allowPrivateHosts = Setting(
        .lists, "allow_private_hosts", .texts, default: .value("[]"),
        allowed: "numeric addresses or networks such as \"127.0.0.1\" or \"192.168.1.0/24\" or \"fd00::/64\"",
        doc: "Private addresses and networks a member's http(s) list may come from all the same.",
        reload: sourceRules)
    /// What every list together may hold (`ListBound`): applied together.
    static let bound = ReloadPart.applies(\.listBound)
    public static let maxNames = Setting(
        .lists, "max_names", .integer(1000...100_000_000), default: .value("2000000"),
        allowed: "1000 to 100000000 names",
        doc: "Most names all lists together may put in force (about 60 bytes of memory each at a refresh); a list add or refresh past it is refused, the copy in force kept.",
        reload: bound)
    public static let maxLists = Setting(
        .lists, "max_lists", .integer(1...1000), default: .value("32"),
        allowed: "1 to 1000 lists",
        doc: "Most lists the household may have; `scrolloff lists add` past it is refused.",
        reload: bound)

    /// `[[lists.source]]`: the lists decide what changed (a list a rule holds keeps its URL).
    static let sources = ReloadPart.appliedByOwner(named: .section(.listsSource))
    public static let sourceName = Setting(
        .listsSource, "name", .text, default: .none("derived from the URL's host"),
        allowed: "1 to 64 of a-z 0-9 . - _, starting with a letter or digit; leave it out to name the list after its host",
        doc: "The list's name, as `scrolloff lists` shows it.",
        reload: sources)
    public static let sourceURL = Setting(
        .listsSource, "url", .text, default: .none("required"),
        allowed: "an http://, https:// or file:/// URL, such as \"https://example.org/hosts.txt\"",
        doc: "Where the list is downloaded from.",
        reload: sources)

    public static let all = [catalog, refreshPeriod, memberFileFolders, allowPrivateHosts, maxNames, maxLists]
    public static let source = [sourceName, sourceURL]
}

/// `[metrics]`: the optional Prometheus endpoint.
public enum MetricsKeys {
    public static let listen = Setting(
        .metrics, "listen", .text, default: .value("\"\""),
        allowed: "\"\" (off) or ADDR:PORT such as \"127.0.0.1:9153\"",
        doc: "Prometheus metrics at http://ADDR:PORT/metrics; \"\" = off.",
        reload: .restart(\.metricsListen))

    public static let all = [listen]
}

/// `[digest]`: the weekly digest's delivery hook (SPEC §7).
public enum DigestKeys {
    static let hook = ReloadPart.applies(\.digestHook, named: .section(.digest))
    public static let command = Setting(
        .digest, "command", .texts, default: .value("[]"),
        allowed: "[] (no hook) or an absolute program path and its arguments, such as [\"/usr/local/bin/notify-digest\", \"--to\", \"sam\"]",
        doc: "A program run for each weekly digest, without a shell, with the digest as JSON on standard input.",
        reload: hook)
    public static let timeout = Setting(
        .digest, "timeout", .duration(.seconds(1) ... .minutes(5)), default: .value("\"10s\""),
        allowed: "1s to 5min",
        doc: "How long the program may run before it is stopped.",
        reload: hook)

    public static let all = [command, timeout]
}

/// `[notify]`: owners are told of a new request for time (SPEC §9a) by a program of theirs, run
/// like the digest's hook.
public enum NotifyKeys {
    static let hook = ReloadPart.applies(\.notifyHook, named: .section(.notify))
    public static let command = Setting(
        .notify, "command", .texts, default: .value("[]"),
        allowed: "[] (no hook) or an absolute program path and its arguments, such as [\"/usr/local/bin/tell-parents\", \"--chat\", \"family\"]",
        doc: "A program run for each new request for time, without a shell, with the event as JSON on standard input.",
        reload: hook)
    public static let timeout = Setting(
        .notify, "timeout", .duration(.seconds(1) ... .minutes(5)), default: .value("\"10s\""),
        allowed: "1s to 5min",
        doc: "How long the program may run before it is stopped.",
        reload: hook)

    public static let all = [command, timeout]
}
