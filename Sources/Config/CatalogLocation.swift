import Foundation

/// Finds the curated catalog (`blocklists/`, SPEC §1) the helper loads at start.
///
/// In order: the `--catalog` flag; `$SCROLLOFF_CATALOG`; `<prefix>/share/scrolloff/blocklists` for the
/// prefix the binary is installed under (`/usr/local/bin/scrolloff-dns` → `/usr/local/share/...`);
/// then, for `make run` from a source tree, the nearest folder above the binary that holds
/// `blocklists/services` (the build output lives under `.build/` in the checkout).
public enum CatalogLocation {
    public struct NotFound: Error, CustomStringConvertible {
        public var searched: [String]
        public var description: String {
            "the curated lists (blocklists/) were not found; looked in \(searched.joined(separator: ", ")). "
                + "Pass --catalog DIR or set SCROLLOFF_CATALOG to the blocklists folder."
        }
    }

    /// - Parameters:
    ///   - explicit: the `--catalog` flag, when given (used as is, even if it turns out unreadable,
    ///     so a typo is reported by the catalog loader instead of silently falling back).
    ///   - environment: the process environment.
    ///   - executablePath: the resolved path of the running binary.
    ///   - isCatalog: whether a folder holds a catalog (injected for tests; by default, whether it
    ///     has a `services` folder).
    public static func find(
        explicit: String?, environment: [String: String], executablePath: String,
        isCatalog: (String) -> Bool = { FileManager.default.fileExists(atPath: $0 + "/services") }
    ) throws(NotFound) -> String {
        if let explicit { return explicit }
        var searched: [String] = []
        if let fromEnvironment = environment["SCROLLOFF_CATALOG"], !fromEnvironment.isEmpty {
            if isCatalog(fromEnvironment) { return fromEnvironment }
            searched.append(fromEnvironment)
        }
        let binDirectory = (executablePath as NSString).deletingLastPathComponent
        let installed = ((binDirectory as NSString).deletingLastPathComponent as NSString)
            .appendingPathComponent("share/scrolloff/blocklists")
        if isCatalog(installed) { return installed }
        searched.append(installed)
        var directory = binDirectory
        while directory != "/" && !directory.isEmpty {
            let candidate = (directory as NSString).appendingPathComponent("blocklists")
            if isCatalog(candidate) { return candidate }
            directory = (directory as NSString).deletingLastPathComponent
        }
        searched.append("blocklists/ in the folders above \(binDirectory)")
        throw NotFound(searched: searched)
    }

    /// The running binary's path, symlinks resolved (`/proc/self/exe`).
    public static func currentExecutablePath() -> String {
        (try? FileManager.default.destinationOfSymbolicLink(atPath: "/proc/self/exe")) ?? CommandLine.arguments[0]
    }
}
