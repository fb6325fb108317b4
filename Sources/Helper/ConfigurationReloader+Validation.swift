import Config
import ControlServer
import Engine
import Firewall
import NIOCore
import ScrollOffCore
import ServiceKit
import Sinkhole

/// A configuration that passed every check needing no running helper, with what the checks
/// worked out kept, so applying it cannot fail on something the checks already looked at.
public struct ValidatedConfiguration: Sendable {
    public let configuration: HelperConfiguration
    /// `configuration.upstreams` as socket addresses, in the same order.
    public let upstreamAddresses: [SocketAddress]
}

extension ConfigurationReloader {
    /// Checks every part of `configuration` that start or a reload would apply, before anything is
    /// applied. Needs no running helper, so `scrolloff-dns check-config` runs the same checks and
    /// refuses the same files with the same words. What only the running rules can answer (a list
    /// source's host against the entries in force, SPEC §1) is checked by the reloader on top.
    @discardableResult
    public static func validate(_ configuration: HelperConfiguration) throws(ConfigurationRejected) -> ValidatedConfiguration {
        guard !configuration.upstreams.isEmpty else {
            // The loader fills an empty `upstreams` from /etc/resolv.conf minus this server itself.
            throw ConfigurationRejected(
                "no upstream resolver: upstreams is empty and /etc/resolv.conf names no server other than this one; "
                    + "name one in the file, such as upstreams = [\"9.9.9.9\"], or with --upstream 9.9.9.9")
        }
        var addresses: [SocketAddress] = []
        for upstream in configuration.upstreams {
            do { addresses.append(try upstream.socketAddress()) } catch {
                throw ConfigurationRejected("upstream \(upstream) is not an IP address and port: \(error)")
            }
        }
        guard (1...PolicyDecision.maximumBlockedTTL).contains(configuration.blockedTTL) else {
            throw ConfigurationRejected(
                "blocked TTL \(configuration.blockedTTL) s is outside 1…\(PolicyDecision.maximumBlockedTTL) s (SPEC §9)")
        }
        guard configuration.forwarder.perUpstream > .zero, configuration.forwarder.overall > .zero else {
            throw ConfigurationRejected("upstream timeouts must be longer than 0 s")
        }
        guard configuration.listRefreshPeriod > .zero else {
            throw ConfigurationRejected("the list refresh period must be longer than 0 s")
        }
        do { try ListsController.validate(configuration.listSources) } catch {
            throw ConfigurationRejected(error.error.message)
        }
        do { try HelperEngine.validateConfiguredProfiles(default: configuration.defaultProfile, profiles: configuration.profiles) } catch {
            throw ConfigurationRejected("\(error)")
        }
        if configuration.firewall.enabled, !configuration.enforcementMode.servesDNS {
            throw ConfigurationRejected(
                "[firewall] enabled needs the DNS sinkhole to redirect DNS to, but helper.mode is \"hosts\"; "
                    + "set helper.mode to \"dns\" or \"both\", or [firewall] enabled = false")
        }
        do { try FirewallController.checkInstalled(configuration.firewall) } catch { throw ConfigurationRejected(error.description) }
        return ValidatedConfiguration(configuration: configuration, upstreamAddresses: addresses)
    }
}
