import ControlServer
import Engine
import Firewall
import Foundation
import HouseholdPage
import ListFetch
import Logging
import NIOCore
import ScrollOffCore
import ServiceKit
import Sinkhole
import Store

/// What `scrolloff-dns start` was asked to do, after flags and defaults are combined.
public struct HelperConfiguration: Sendable {
    public var paths: RuntimePaths
    public var listen: [HostPort]
    public var upstreams: [HostPort]
    public var blockingMode: BlockingMode
    /// The curated catalog folder (`--catalog`); nil = found by `CatalogLocation`.
    public var catalogPath: String?
    /// Known DoH endpoints to block (SPEC §9, optional).
    public var dohEndpointsPath: String?
    public var eventLoops: Int
    public var forwarder: ForwarderTimeouts
    public var cache: CacheConfiguration
    /// TTL of a blocked answer, 1…10 s (SPEC §9 "at most 10 s").
    public var blockedTTL: UInt32 = 10
    /// Per-client query budget; nil = no limit.
    public var rateLimit: RateLimit?
    /// Lists the configuration file names, refreshed like those added with `scrolloff lists add`.
    public var listSources: [ConfiguredListSource] = []
    /// How often every downloaded list is refreshed (SPEC §1; default 24 h).
    public var listRefreshPeriod: Span = .hours(24)
    /// Who may add which list sources (`[lists] member_file_folders`, `allow_private_hosts`).
    public var listSourceRules = ListSourceRules()
    /// What every list together may hold (`[lists] max_names`, `max_lists`).
    public var listBound = ListBound()
    /// The default profile's zone, preset and knobs (SPEC §6); clients not in another profile.
    /// `name` is always `default` and `clientCIDRs` empty.
    public var defaultProfile: ProfileSettings = HelperConfiguration.embeddedDefaultProfile
    /// Profiles with their client networks, zone, preset, knobs and owner uids (SPEC §9, §11).
    public var profiles: [ProfileSettings] = []
    /// `[[allowances]]`: the owner's daily allowances the file gives (SPEC §4a), one per profile and entries.
    public var allowances: [ConfiguredAllowance] = []
    /// `[profile] unknown_devices`: the profile that devices no profile claims follow (SPEC §9).
    public var unknownDevices: String = "default"
    /// Where the optional Prometheus endpoint listens; nil = off (the default).
    public var metricsListen: HostPort?
    /// Where the household page listens (SPEC §9a, `[web] listen`, `--web-listen`); empty = off.
    /// On loopback by default, so the machine's own people find it at a documented address and
    /// nothing on the LAN sees it until the configuration says so. Several addresses are several
    /// listeners of one page (a router's LAN address and loopback): one set of sessions, one
    /// connection budget.
    public var webListenAddresses: [HostPort] = [HelperConfiguration.defaultWebListen]
    /// The first address of the page, nil when it is off; setting it makes it the only one.
    public var webListen: HostPort? {
        get { webListenAddresses.first }
        set { webListenAddresses = newValue.map { [$0] } ?? [] }
    }
    /// Whether the file or a flag named `webListen`: then a port in use stops the start. The
    /// default address in use only turns the page off, with a warning: DNS must not wait for it.
    public var webListenRequired = false
    /// `[web] request_timeout` and `sign_in_max_delay`: the page against slow clients and guessers.
    public var web = WebSettings()
    /// `[digest]`: the optional delivery hook of the weekly digest (SPEC §7).
    public var digestHook = DigestHookSettings()
    /// `[store]`: SQLite (default) or a PostgreSQL server shared by the household's helpers.
    public var store = StoreSettings()
    /// `[notify]`: the optional hook run for each new request for time (SPEC §9a).
    public var notifyHook = DigestHookSettings()
    /// The household page's documented port.
    public static let defaultWebPort = 5381
    public static let defaultWebListen = HostPort(host: "127.0.0.1", port: defaultWebPort)
    public var logLevel: Logger.Level = .info
    /// How rules are enforced (`helper.mode`, `--mode`): the sinkhole, the hosts file or both.
    public var enforcementMode: EnforcementMode = .dns
    /// The hosts file of hosts mode (`helper.hosts_file`, `--hosts-file`).
    public var hostsFile: String = "/etc/hosts"
    /// Bounds of DNS over TCP (`dns.tcp_*`); taken at start.
    public var tcp = TCPLimits()
    /// The optional nftables table against DNS bypasses (`[firewall]`, SPEC §9b).
    public var firewall = FirewallSettings()
    /// Bounds of the control socket (`helper.control_connections*`); taken at start.
    public var control = ControlConnectionLimits()

    /// The default profile when no file says otherwise: the system's zone and the strict preset.
    public static var embeddedDefaultProfile: ProfileSettings {
        ProfileSettings(name: "default", timeZoneID: TimeZone.current.identifier, preset: .default)
    }

    public struct ForwarderTimeouts: Sendable {
        public var perUpstream: TimeAmount
        public var overall: TimeAmount
        /// `dns.unwanted_reply_threshold`: datagrams on an upstream port that answer none of its
        /// questions before the port is dropped and its questions asked over TCP; 0 = never.
        public var unwantedReplyThreshold: Int
        public init(perUpstream: TimeAmount = .seconds(2), overall: TimeAmount = .seconds(4), unwantedReplyThreshold: Int = 10) {
            self.perUpstream = perUpstream
            self.overall = overall
            self.unwantedReplyThreshold = unwantedReplyThreshold
        }
    }

    public init(
        paths: RuntimePaths, listen: [HostPort], upstreams: [HostPort], blockingMode: BlockingMode = .null,
        dohEndpointsPath: String? = nil, eventLoops: Int = EventLoopScheduling.availableCores,
        forwarder: ForwarderTimeouts = ForwarderTimeouts(), cache: CacheConfiguration = CacheConfiguration()
    ) {
        self.paths = paths
        self.listen = listen
        self.upstreams = upstreams
        self.blockingMode = blockingMode
        self.dohEndpointsPath = dohEndpointsPath
        self.eventLoops = max(eventLoops, 1)
        self.forwarder = forwarder
        self.cache = cache
    }
}



/// Where the rules take effect (SPEC §10): DNS answers, the managed hosts-file section, or both.
public enum EnforcementMode: String, Sendable, CaseIterable {
    case dns, hosts, both
    /// Whether the DNS sinkhole listens.
    public var servesDNS: Bool { self != .hosts }
    /// Whether the hosts-file section is kept.
    public var writesHosts: Bool { self != .dns }
}
