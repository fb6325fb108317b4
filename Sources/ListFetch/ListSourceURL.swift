import CCurlShim
import Foundation

/// A list URL read by libcurl's own URL parser (`curl_url`), the one the transfer uses. Every
/// place that needs a list URL's host asks here: the always-allow list (SPEC §1), the name derived
/// for a list, and the error for an unknown host. So the host kept allowed is always the host
/// fetched, however the URL spells user-info, a port or an IPv6 literal.
public struct ListSourceURL: Sendable, Hashable {
    /// Lowercased, such as `https` or `file`.
    public let scheme: String
    /// Lowercased, without brackets for an IPv6 literal and without user-info or port; nil when
    /// the URL has none (`file:///path`).
    public let host: String?
    /// The path, percent-decoded (`/var/lib/a b.txt`).
    public let path: String

    /// Nil when libcurl cannot read `text` as an absolute URL. Schemes libcurl does not fetch are
    /// still read, so the caller can say which schemes are supported.
    public init?(_ text: String) {
        guard let handle = curl_url() else { return nil }
        defer { curl_url_cleanup(handle) }
        guard curl_url_set(handle, CURLUPART_URL, text, UInt32(CURLU_NON_SUPPORT_SCHEME)) == CURLUE_OK,
              let scheme = Self.part(handle, CURLUPART_SCHEME)
        else { return nil }
        self.scheme = scheme.lowercased()
        var host = Self.part(handle, CURLUPART_HOST)?.lowercased()
        if let h = host, h.hasPrefix("["), h.hasSuffix("]") { host = String(h.dropFirst().dropLast()) }
        self.host = host.flatMap { $0.isEmpty ? nil : $0 }
        let path = Self.part(handle, CURLUPART_PATH) ?? "/"
        self.path = path.removingPercentEncoding ?? path
    }

    /// The host of a fetched (not file://) list URL, for the always-allow list; nil otherwise.
    public var fetchedHost: String? { scheme == "file" ? nil : host }

    private static func part(_ handle: OpaquePointer, _ which: CURLUPart) -> String? {
        var out: UnsafeMutablePointer<CChar>?
        guard curl_url_get(handle, which, &out, 0) == CURLUE_OK, let out else { return nil }
        defer { curl_free(out) }
        return String(cString: out)
    }
}
