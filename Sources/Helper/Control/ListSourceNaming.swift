import Foundation
import ListFetch

/// Checks list URLs and derives list names from them.
enum ListSourceNaming {
    /// Accepts http and https URLs with a host, and file URLs with an absolute path.
    static func validate(_ url: String) throws(ControlFailure) -> URLComponents {
        guard let components = URLComponents(string: url), let scheme = components.scheme?.lowercased() else {
            throw .invalidArgument("'\(url)' is not a URL. Give a full URL such as https://example.org/hosts.txt or file:///srv/list.txt.")
        }
        switch scheme {
        case "http", "https":
            guard let host = components.host, !host.isEmpty else {
                throw .invalidArgument("'\(url)' has no host. Give a full URL such as https://example.org/hosts.txt.")
            }
        case "file":
            guard components.path.hasPrefix("/"), components.host.map({ $0.isEmpty || $0 == "localhost" }) ?? true else {
                throw .invalidArgument("'\(url)' is not a local file URL. Write it as file:///absolute/path/list.txt.")
            }
        default:
            throw .invalidArgument("'\(url)' uses \(scheme)://; lists can come from http://, https:// or file:// URLs only.")
        }
        return components
    }

    /// A name from the URL: the host without `www.` (`blocklist.example.org`), or for a file URL
    /// the file name without its extension. Characters a list name cannot hold become `-`.
    static func derivedName(from components: URLComponents) -> String {
        var base: String
        if let host = components.host, !host.isEmpty {
            base = host.lowercased()
            if base.hasPrefix("www.") { base.removeFirst(4) }
        } else {
            let file = (components.path as NSString).lastPathComponent
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
