#if canImport(Glibc)
import Glibc
#endif
import Logging

/// Makes sure the connection limits fit in the process's file descriptor limit (RLIMIT_NOFILE).
///
/// Every TCP and control connection holds a descriptor, and so do list downloads, the database
/// and TCP fallbacks to upstreams (the UDP forwarding sockets are a pool opened at start). If the
/// limits allowed more connections than there are descriptors, a flood of connections would
/// leave none for those, and the listeners would pause accepting. The soft limit is raised towards the hard one when that is enough (as Go's
/// runtime does); otherwise the start-up log says which numbers to change.
enum DescriptorBudget {
    /// Descriptors kept for the forwarder, the database, list downloads and the listeners.
    static let reserve = 1024

    static func needed(_ configuration: HelperConfiguration) -> Int {
        // The household page's connections, when it listens (`WebConnectionLimit`).
        let web = configuration.webListen == nil ? 0 : WebConnectionLimit.defaultTotal
        return configuration.tcp.maximumConnections + configuration.control.total + web + reserve
    }

    /// Raises the soft limit if it is below what the limits need; logs a warning if even the hard
    /// limit is.
    static func ensure(_ configuration: HelperConfiguration, logger: Logger) {
        var limit = rlimit()
        guard getrlimit(Int32(RLIMIT_NOFILE.rawValue), &limit) == 0 else { return }
        let want = rlim_t(needed(configuration))
        guard limit.rlim_cur < want else { return }
        let raised = min(want, limit.rlim_max)
        if raised > limit.rlim_cur {
            var next = limit
            next.rlim_cur = raised
            if setrlimit(Int32(RLIMIT_NOFILE.rawValue), &next) == 0 { limit = next }
        }
        guard limit.rlim_cur < want else { return }
        logger.warning(
            "the file descriptor limit is lower than the connection limits need; a flood of connections could leave none for forwarding. Raise LimitNOFILE (ulimit -n) or lower dns.tcp_connections and helper.control_connections",
            metadata: [
                "descriptors.limit": "\(limit.rlim_cur)", "descriptors.needed": "\(want)",
                "dns.tcp_connections": "\(configuration.tcp.maximumConnections)",
                "helper.control_connections": "\(configuration.control.total)",
            ])
    }
}
