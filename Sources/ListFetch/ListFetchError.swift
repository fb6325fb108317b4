import ScrollOffCore

/// Everything that can go wrong while refreshing a list, with a message that says what failed and
/// what to do about it. A failed refresh never removes the last good copy (ListStore), so every
/// message can promise that blocking goes on with the copy already in force.
public enum ListFetchError: Error, Sendable, Equatable, CustomStringConvertible {
    /// Which limit ended a transfer that took too long.
    public enum TimeoutPhase: String, Sendable, Codable, Equatable {
        /// No connection within the connect timeout.
        case connect
        /// Connected, but fewer bytes than the low-speed limit arrived for the stall window.
        case stalled
        /// The whole transfer ran past the total timeout.
        case total
    }

    case unsupportedURL(url: String)
    case invalidListName(name: String)
    case hostNotFound(url: String, host: String)
    case connectionFailed(url: String, detail: String)
    case timedOut(url: String, phase: TimeoutPhase, limit: Span)
    /// The final response was an HTTP error (RFC 9110 §15.5, §15.6) or another status we cannot use.
    case httpStatus(url: String, status: Int)
    case tooLarge(url: String, limitBytes: Int64)
    case truncated(url: String, receivedBytes: Int64)
    case tooManyRedirects(url: String, limit: Int)
    /// A redirect pointed at a scheme other than http or https (a `file://` redirect would read
    /// local files on the server's say-so).
    case redirectRefused(url: String, detail: String)
    case fileNotFound(path: String)
    /// The source is not one its adder may use: a file outside the members' folders,
    /// behind a symbolic link, or not readable by them. `reason` names paths and ids, never content.
    case sourceRefused(url: String, reason: String)
    /// A member's source connected (or was redirected) to an address that is not public: this
    /// machine, its networks, link-local, multicast.
    case addressRefused(url: String, address: String, kind: String)
    case tls(url: String, detail: String)
    case badContentEncoding(url: String, detail: String)
    case cancelled(url: String)
    case transfer(url: String, curlCode: Int, detail: String)
    case localFile(path: String, operation: String, errno: Int32)
    case rejectedByValidation(name: String, reason: String)
    case emptyList(name: String)
    /// The copy would pass the household's bound on names or lists in force (`reason` gives the
    /// numbers and what to do); the copy in force, if any, stays.
    case overBound(name: String, reason: String)
    case curlUnavailable(detail: String)

    /// Whether another attempt a few seconds later can reasonably succeed. Only faults of the
    /// network or of an overloaded server qualify; a wrong URL or an oversized list stays wrong.
    public var isRetryable: Bool {
        switch self {
        case .hostNotFound, .connectionFailed, .timedOut, .truncated, .transfer:
            return true
        case .httpStatus(_, let status):
            // 408 Request Timeout, 425 Too Early, 429 Too Many Requests and every 5xx are
            // transient by definition (RFC 9110 §15.5.9, RFC 8470 §5.2, RFC 6585 §4, RFC 9110 §15.6).
            return status == 408 || status == 425 || status == 429 || (500...599).contains(status)
        case .unsupportedURL, .invalidListName, .tooLarge, .tooManyRedirects, .redirectRefused,
             .fileNotFound, .sourceRefused, .addressRefused, .tls, .badContentEncoding, .cancelled, .localFile, .rejectedByValidation,
             .emptyList, .overBound, .curlUnavailable:
            return false
        }
    }

    /// A short stable identifier for scripts and `--json` output (`http-404`, `timeout-stalled`).
    public var code: String {
        switch self {
        case .unsupportedURL: return "unsupported-url"
        case .invalidListName: return "invalid-name"
        case .hostNotFound: return "host-not-found"
        case .connectionFailed: return "connection-failed"
        case .timedOut(_, let phase, _): return "timeout-\(phase.rawValue)"
        case .httpStatus(_, let status): return "http-\(status)"
        case .tooLarge: return "too-large"
        case .truncated: return "truncated"
        case .tooManyRedirects: return "too-many-redirects"
        case .redirectRefused: return "redirect-refused"
        case .fileNotFound: return "file-not-found"
        case .sourceRefused: return "source-refused"
        case .addressRefused: return "address-refused"
        case .tls: return "tls"
        case .badContentEncoding: return "bad-content-encoding"
        case .cancelled: return "cancelled"
        case .transfer(_, let curlCode, _): return "curl-\(curlCode)"
        case .localFile: return "local-file"
        case .rejectedByValidation: return "rejected"
        case .emptyList: return "empty-list"
        case .overBound: return "over-bound"
        case .curlUnavailable: return "curl-unavailable"
        }
    }

    public var description: String { description(atAdd: false) }

    /// The description for `lists add`, where a failure keeps nothing: no "next refresh" will try
    /// again and there is no list to remove, so it says what to try now.
    public func description(atAdd: Bool) -> String {
        guard atAdd else { return descriptionOfRefresh }
        let again = "Nothing was added; check the URL, then run `scrolloff lists add` again."
        switch self {
        case .httpStatus(let url, let status) where status == 404 || status == 410:
            return "The server has no list at \(url) (HTTP \(status)). Nothing was added; open the URL in a browser to find "
                + "where the list lives now, and add that URL."
        default:
            var text = descriptionOfRefresh
            for later in ["; the next refresh will try again.", " The next refresh will try again."] where text.hasSuffix(later) {
                text = String(text.dropLast(later.count)) + ". " + again
            }
            if text.hasSuffix("try a different mirror.") { text += " " + again }
            return text
        }
    }

    /// What went wrong, without the advice: the description's first sentence, for a line that
    /// says another attempt follows.
    public var problem: String {
        let text = descriptionOfRefresh
        guard let end = text.range(of: ". ") else { return text }
        return String(text[..<end.lowerBound])
    }

    private var descriptionOfRefresh: String {
        switch self {
        case .unsupportedURL(let url):
            return "Cannot fetch '\(url)': only http://, https:// and file:// URLs are supported. "
                + "Add the list again with a full URL such as https://example.org/hosts.txt."
        case .invalidListName(let name):
            return "'\(name)' cannot be used as a list name: use 1 to 64 lowercase letters, digits, "
                + "'.', '-' or '_', starting with a letter or digit."
        case .hostNotFound(let url, let host):
            return "Could not look up the host '\(host)' for \(url). Check the spelling of the URL "
                + "and that this machine has a working upstream resolver; the next refresh will try again."
        case .connectionFailed(let url, let detail):
            return "Could not get an answer from the server for \(url) (\(detail)). It may be down or "
                + "unreachable from here; the next refresh will try again."
        case .timedOut(let url, let phase, let limit):
            let seconds = Double(limit.milliseconds) / 1000
            switch phase {
            case .connect:
                return "No connection to the server for \(url) within \(seconds) s. The server may be "
                    + "down or a firewall may drop the traffic; the next refresh will try again."
            case .stalled:
                return "The download of \(url) stalled: almost no data arrived for \(seconds) s. "
                    + "The server or the network is struggling; the next refresh will try again."
            case .total:
                return "The download of \(url) did not finish within \(seconds) s. If the list is very "
                    + "large or the link slow, a mirror closer to you may help."
            }
        case .httpStatus(let url, let status):
            switch status {
            case 304:
                return "The server for \(url) answered 304 Not Modified to a request that was not "
                    + "conditional. That is a server bug; the next refresh will try again."
            case 401, 403:
                return "The server refused access to \(url) (HTTP \(status)). The list may now need "
                    + "a login; pick a public URL for it."
            case 404, 410:
                return "The server has no list at \(url) (HTTP \(status)). Check that the URL is still "
                    + "current, then remove the list and add it with its new URL."
            case 500...599:
                return "The server for \(url) had a problem (HTTP \(status)). That is usually "
                    + "temporary; the next refresh will try again."
            default:
                return "The server answered HTTP \(status) for \(url), which is not a list. Check the "
                    + "URL in a browser."
            }
        case .tooLarge(let url, let limitBytes):
            return "The list at \(url) is larger than the \(Self.formatBytes(limitBytes)) size limit, "
                + "so the download was stopped. Pick a smaller list, or raise the size limit if you "
                + "trust this source."
        case .truncated(let url, let receivedBytes):
            return "The download of \(url) ended early after \(Self.formatBytes(receivedBytes)): the "
                + "connection closed before the whole list arrived. The next refresh will try again."
        case .tooManyRedirects(let url, let limit):
            return "\(url) redirected more than \(limit) times (perhaps in a loop). Open it in a "
                + "browser to find where the list lives now, and add that URL instead."
        case .redirectRefused(let url, let detail):
            return "\(url) redirected to an address that is not http or https (\(detail)); "
                + "Scroll Off does not follow it. Add the list's final http(s) URL instead."
        case .fileNotFound(let path):
            return "There is no readable file at \(path). Check the path and that the helper "
                + "(which runs as its own user) may read it."
        case .sourceRefused(let url, let reason):
            return "\(url) was not read: \(reason)"
        case .addressRefused(let url, let address, let kind):
            return "\(url) led to \(address), \(kind); a list a group member adds must come from a public server. "
                + "Ask an administrator to add it with `sudo scrolloff lists add \(url)`, or to allow \(address) in "
                + "[lists] allow_private_hosts."
        case .tls(let url, let detail):
            return "The secure connection to the server for \(url) could not be verified (\(detail)). "
                + "Check the machine's date and its CA certificates (package ca-certificates)."
        case .badContentEncoding(let url, let detail):
            return "The server sent \(url) with a compression that could not be decoded (\(detail)). "
                + "The next refresh will try again; if it keeps failing, try a different mirror."
        case .cancelled(let url):
            return "The download of \(url) was cancelled before it finished."
        case .transfer(let url, let curlCode, let detail):
            return "The download of \(url) failed (libcurl error \(curlCode): \(detail)). "
                + "The next refresh will try again."
        case .localFile(let path, let operation, let errno):
            return "Could not \(operation) \(path) (errno \(errno)). Check free disk space and the "
                + "permissions of the state folder."
        case .rejectedByValidation(let name, let reason):
            return "The new copy of list '\(name)' was not used: \(reason). The server may be sending "
                + "an error page or a different format; check the URL in a browser."
        case .emptyList(let name):
            return "The new copy of list '\(name)' has no entries, so it was not used (an empty copy "
                + "would quietly unblock everything in it). Check the URL in a browser."
        case .overBound(_, let reason):
            return reason
        case .curlUnavailable(let detail):
            return "libcurl could not be set up (\(detail)). Reinstall the libcurl4 package."
        }
    }

    /// Bytes in binary units with one decimal, integer arithmetic only (no locale, no rounding drift).
    static func formatBytes(_ bytes: Int64) -> String {
        func tenths(_ unit: Int64) -> String {
            let t = bytes / unit * 10 + bytes % unit * 10 / unit
            return t % 10 == 0 ? "\(t / 10)" : "\(t / 10).\(t % 10)"
        }
        if bytes >= 1 << 20 { return tenths(1 << 20) + " MiB" }
        if bytes >= 1 << 10 { return tenths(1 << 10) + " KiB" }
        return "\(bytes) bytes"
    }
}
