import Foundation
import ListFetch
import ServiceKit

/// Checks list URLs and derives list names from them.
package enum ListSourceNaming {
    /// Accepts http and https URLs with a host, and file URLs with an absolute path. The URL is
    /// read by libcurl's parser (`ListSourceURL`), the one that fetches it, so the host checked and
    /// allowed is the host fetched.
    package static func validate(_ url: String) throws(ControlFailure) -> ListSourceURL {
        guard let parsed = ListSourceURL(url) else {
            throw .invalidArgument("'\(url)' is not a URL. Give a full URL such as https://example.org/hosts.txt or file:///srv/list.txt.")
        }
        switch parsed.scheme {
        case "http", "https":
            guard parsed.host != nil else {
                throw .invalidArgument("'\(url)' has no host. Give a full URL such as https://example.org/hosts.txt.")
            }
        case "file":
            guard parsed.path.hasPrefix("/"), parsed.host.map({ $0 == "localhost" }) ?? true else {
                throw .invalidArgument("'\(url)' is not a local file URL. Write it as file:///absolute/path/list.txt.")
            }
        default:
            throw .invalidArgument("'\(url)' uses \(parsed.scheme)://; lists can come from http://, https:// or file:// URLs only.")
        }
        return parsed
    }

    /// A name from the URL: the host without `www.` (`blocklist.example.org`), or for a file URL
    /// the file name without its extension. Characters a list name cannot hold become `-`.
    package static func derivedName(from url: ListSourceURL) -> String {
        var base: String
        if let host = url.fetchedHost {
            base = host
            if base.hasPrefix("www.") { base.removeFirst(4) }
        } else {
            let file = (url.path as NSString).lastPathComponent
            let stem = (file as NSString).deletingPathExtension
            base = (stem.isEmpty ? file : stem).lowercased()
        }
        var cleaned = String(base.map { ch -> Character in
            ch.isASCII && (ch.isLetter || ch.isNumber || ch == "." || ch == "-" || ch == "_") ? ch : "-"
        })
        while let first = cleaned.first, !(first.isLetter || first.isNumber) { cleaned.removeFirst() }
        if cleaned.isEmpty { cleaned = "list" }
        return String(cleaned.prefix(56))
    }
}
