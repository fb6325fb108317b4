#if canImport(Glibc)
import Glibc
#endif
import Foundation
import Logging
import NIOCore
import ScrollOffCore
import ServiceKit
import Sinkhole
import TOMLKit

/// `scrolloff.toml`: reads the file, checks every key, and combines it with the flags of
/// `scrolloff-dns start` into one `HelperConfiguration` (SPEC §6, §9, §13).
///
/// Precedence is flags > file > embedded defaults: a flag given on the command line beats the
/// file, and a key the file leaves out keeps its embedded default (`etc/scrolloff.toml` lists them
/// all). Rules, schedules, the wallet, plans, lists added with `scrolloff lists add` and profiles
/// made with `scrolloff profile add` are not here: the CLI stores them in the database.
public enum ConfigurationFile {
    /// Where the system resolver's servers are read when `dns.upstreams` is empty (SPEC §13).
    public static let resolvConfPath = "/etc/resolv.conf"

    /// Loads the file at `path`, or at `base.configFile` when `path` is nil.
    ///
    /// An absent file at the default location means the embedded defaults, so the helper runs
    /// without one; a file named explicitly (`--config`) must exist, since a typo in its name would
    /// otherwise start the helper with settings nobody chose.
    /// - Parameters:
    ///   - overrides: the flags given on the command line; they beat the file.
    ///   - resolvConf: read for upstreams when neither the file nor a flag names any.
    ///   - requireTrustedFile: refuse a file that someone other than this process's user could
    ///     change; on by default for the root helper (see `untrustedReason`).
    /// - Throws: `ConfigurationError` with every problem found, each naming key, line and what is allowed.
    public static func load(
        path: String?, base: RuntimePaths, overrides: ConfigurationOverrides = ConfigurationOverrides(),
        resolvConf: String = resolvConfPath, requireTrustedFile: Bool = geteuid() == 0
    ) throws(ConfigurationError) -> HelperConfiguration {
        let file = path ?? base.configFile
        var paths = base
        paths.configFile = file
        let text: String
        if FileManager.default.fileExists(atPath: file) {
            if requireTrustedFile, let reason = untrustedReason(path: file) { throw .unreadable(path: file, reason: reason) }
            do {
                text = try String(contentsOfFile: file, encoding: .utf8)
            } catch {
                throw .unreadable(path: file, reason: "\(error.localizedDescription); check its owner and mode (the helper reads it as root)")
            }
        } else if path == nil {
            text = ""
        } else {
            throw .unreadable(
                path: file,
                reason: "no such file. Copy the documented sample (etc/scrolloff.toml) there, or leave out --config to use the defaults")
        }
        return try parse(text: text, source: file, base: paths, overrides: overrides, resolvConf: resolvConf)
    }

    /// Parses `text` as if it were the file `source` (named in messages).
    public static func parse(
        text: String, source: String, base: RuntimePaths, overrides: ConfigurationOverrides = ConfigurationOverrides(),
        resolvConf: String = resolvConfPath
    ) throws(ConfigurationError) -> HelperConfiguration {
        let document: TOMLTable
        do {
            document = try TOMLTable(string: text)
        } catch let error as TOMLParseError {
            throw .syntax(path: source, line: error.source.begin.line, column: error.source.begin.column, message: error.description)
        } catch {
            throw .syntax(path: source, line: 1, column: 1, message: "\(error)")
        }
        let log = ProblemLog(index: KeyLineIndex(text: text))
        var sections = FileSections(base: base)
        sections.read(TableReader(table: document, path: "", log: log))
        var configuration = sections.configuration
        overrides.apply(to: &configuration)
        // The curated DoH list is found after the flags, since `--catalog` may move the catalog.
        if overrides.dohEndpointsPath == nil, sections.blockEncryptedDNS {
            configuration.dohEndpointsPath = encryptedDNSList(catalog: configuration.catalogPath, log: log)
        }
        AllowanceSection.checkEntries(sections.allowanceNames, catalog: configuration.catalogPath,
                                      lists: configuration.listSources.map(\.name), log: log)
        if configuration.upstreams.isEmpty {
            configuration.upstreams = ResolvConf.upstreams(path: resolvConf, excluding: configuration.listen)
        }
        guard log.problems.isEmpty else {
            let ordered = log.problems.sorted { ($0.line ?? .max, $0.key) < ($1.line ?? .max, $1.key) }
            throw .invalid(path: source, problems: ordered)
        }
        return configuration
    }

    /// Why the file at `path` could be changed by someone other than this process's user, or nil.
    ///
    /// SPEC §11: members of group `scrolloff` use the CLI, whose locks and cooldowns they cannot
    /// undo; a configuration file they could write would let them loosen every knob at the next
    /// reload instead. So the root helper takes its settings only from a file that its own user
    /// owns and that neither group members nor others may write (group root may: it is root).
    static func untrustedReason(path: String) -> String? {
        var info = stat()
        guard stat(path, &info) == 0 else { return nil } // unreadable: the read below reports it
        // The folders above it count as much as the file: whoever may write one of them may put
        // another file in its place (SPEC §11).
        do { try FolderTrust.check((FolderTrust.absolute(path) as NSString).deletingLastPathComponent, role: .configuration) } catch {
            return error.description
        }
        // A link to the file: its owner could point it at a file of their own, and the file it
        // leads to sits in folders that need the same trust as the link's.
        var link = stat()
        if lstat(path, &link) == 0, link.st_mode & S_IFMT == S_IFLNK {
            if link.st_uid != 0, link.st_uid != geteuid() {
                return "it is a symbolic link owned by uid \(link.st_uid), who could point it at a file of their own; "
                    + "replace it by the file itself, or a link of the helper's own user"
            }
            if let resolved = realpath(path, nil) {
                defer { free(resolved) }
                let real = String(cString: resolved)
                do { try FolderTrust.check((real as NSString).deletingLastPathComponent, role: .configuration) } catch {
                    return error.description
                }
            }
        }
        let fix = "make it the helper's own: chown \(geteuid()):0 \(path) && chmod 644 \(path)"
        if info.st_uid != geteuid() {
            return "it is owned by uid \(info.st_uid), who could loosen the rules by editing it; \(fix)"
        }
        if info.st_mode & S_IWOTH != 0 {
            return "anyone may write it (mode \(String(info.st_mode & 0o777, radix: 8))), and so loosen the rules; \(fix)"
        }
        if info.st_mode & S_IWGRP != 0, info.st_gid != 0 {
            return "members of its group (gid \(info.st_gid)) may write it, and so loosen the rules; \(fix)"
        }
        return nil
    }

    /// The configuration with no file and no flags: what `etc/scrolloff.toml` documents.
    public static func embeddedDefaults(base: RuntimePaths) -> HelperConfiguration {
        FileSections(base: base).configuration
    }

    /// `<catalog>/doh/encrypted-dns.list`, the curated list of DNS-over-HTTPS and DoT hosts
    /// (SPEC §9), or nil with a problem reported when there is no catalog to take it from.
    static func encryptedDNSList(catalog: String?, log: ProblemLog) -> String? {
        let key = DNSKeys.blockEncryptedDNS.path
        let folder: String
        do {
            folder = try CatalogLocation.find(
                explicit: catalog, environment: ProcessInfo.processInfo.environment,
                executablePath: CatalogLocation.currentExecutablePath())
        } catch {
            log.report(key, "is true, but \(error.description)", allowed: "false, or true with the curated lists installed")
            return nil
        }
        let list = folder + "/doh/encrypted-dns.list"
        guard FileManager.default.isReadableFile(atPath: list) else {
            log.report(key, "is true, but \(list) cannot be read", allowed: "false, or true with the curated lists installed (lists.catalog)")
            return nil
        }
        return list
    }
}

/// The flags of `scrolloff-dns start` that can also be set in the file; nil = not given, so the
/// file (or its default) decides.
public struct ConfigurationOverrides: Sendable, Equatable {
    public var stateDirectory: String?
    public var controlSocket: String?
    public var listen: [HostPort]?
    public var upstreams: [HostPort]?
    public var blockingMode: BlockingMode?
    public var threads: Int?
    public var upstreamTimeout: TimeAmount?
    public var cacheSize: Int?
    public var logLevel: Logger.Level?
    public var catalogPath: String?
    public var dohEndpointsPath: String?
    public var metricsListen: HostPort?
    /// `--web-listen ADDR:PORT` (port 0 picks one) or `--web-listen off`: `.some(nil)` is off.
    public var webListen: HostPort??
    public var enforcementMode: EnforcementMode?
    public var hostsFile: String?

    public init() {}

    func apply(to c: inout HelperConfiguration) {
        if let stateDirectory { c.paths.stateDirectory = stateDirectory }
        if let controlSocket { c.paths.controlSocket = controlSocket }
        if let listen { c.listen = listen }
        if let upstreams { c.upstreams = upstreams }
        if let blockingMode { c.blockingMode = blockingMode }
        if let threads { c.eventLoops = threads }
        if let upstreamTimeout {
            c.forwarder.perUpstream = upstreamTimeout
            c.forwarder.overall = upstreamTimeout * 2
        }
        if let cacheSize { c.cache.capacity = cacheSize }
        if let logLevel { c.logLevel = logLevel }
        if let catalogPath { c.catalogPath = catalogPath }
        if let dohEndpointsPath { c.dohEndpointsPath = dohEndpointsPath }
        if let metricsListen { c.metricsListen = metricsListen }
        if let webListen {
            c.webListen = webListen
            c.webListenRequired = webListen != nil
        }
        if let enforcementMode { c.enforcementMode = enforcementMode }
        if let hostsFile { c.hostsFile = hostsFile }
    }
}
