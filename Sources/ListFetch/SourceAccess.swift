#if canImport(Glibc)
import Glibc
#endif

/// The person a list source was added by, kept in its record (`ListMetadata.addedBy`) so every
/// later refresh, whoever starts it, is checked against that person's rights.
public struct SourceAdder: Sendable, Equatable, Codable {
    public var uid: UInt32
    public var gid: UInt32

    public init(uid: UInt32, gid: UInt32) {
        self.uid = uid
        self.gid = gid
    }

    /// Stands for the adder of a record written before adders were kept: nobody's rights, so such
    /// a list is read only if anyone may read it.
    public static let unknown = SourceAdder(uid: 65534, gid: 65534)
}

/// What one fetch may read and reach. The root helper reads files and connects on a person's
/// behalf, so a group member's source must not get more than that member could read or reach
/// themselves (`lists add file:///etc/shadow` showed the file's first lines).
///
/// An administrator's source (root, the helper's own user, the configuration file) has no
/// `reader`: any file and any host, as they could fetch it themselves. Every file source, an
/// administrator's too, is opened without following a symbolic link anywhere in its path and
/// must be a regular file: a member who can write in a folder root reads a list from must not be
/// able to point it at another file.
public struct SourceAccess: Sendable, Equatable {
    /// The member the source is read for, with their groups; nil for an administrator's source.
    public var reader: Reader?
    /// Folders under which a member may name a file (`[lists] member_file_folders`).
    public var memberFolders: [String]
    /// Addresses and networks a member's source may connect to although they are loopback,
    /// private, link-local or the helper's own (`[lists] allow_private_hosts`).
    public var allowedPrivate: [AddressNetwork]
    /// The other helper of the household a source was added through (`scrolloff lists add` there);
    /// nil for this helper's own. Such a source is read here as a member's, whoever added it.
    public var addedThrough: String?

    public struct Reader: Sendable, Equatable {
        public var uid: UInt32
        public var gid: UInt32
        /// Supplementary groups, from the group database (SO_PEERCRED carries none).
        public var groups: [UInt32]
        public init(uid: UInt32, gid: UInt32, groups: [UInt32]) {
            self.uid = uid
            self.gid = gid
            self.groups = groups
        }
    }

    public init(reader: Reader? = nil, memberFolders: [String] = [], allowedPrivate: [AddressNetwork] = []) {
        self.reader = reader
        self.memberFolders = memberFolders
        self.allowedPrivate = allowedPrivate
    }

    /// Any file, any host (symbolic links still refused).
    public static let administrator = SourceAccess()

    // MARK: file sources

    /// Why a member may not name `path`, before anything is opened; nil when the path is within
    /// one of `memberFolders` (or the source is an administrator's). The path must be plain:
    /// absolute, no `.` or `..` component.
    public func refusal(ofFile path: String) -> String? {
        guard let components = Self.components(of: path) else {
            return "\(path) is not a plain absolute path (no '.' or '..' parts); write the file's real path."
        }
        guard reader != nil else { return nil }
        let inside = memberFolders.contains { folder in
            guard let base = Self.components(of: folder) else { return false }
            return components.count > base.count && Array(components.prefix(base.count)) == base
        }
        guard !inside else { return nil }
        if let addedThrough {
            let here = memberFolders.isEmpty
                ? "this helper names no such folder ([lists] member_file_folders is empty)"
                : "place the file under \(memberFolders.joined(separator: " or ")) on this machine"
            return "it was added through the helper \(addedThrough), and this helper reads another helper's file:// source only "
                + "from its [lists] member_file_folders: \(here), or name the list in this helper's configuration file ([[lists.source]])."
        }
        let folders = memberFolders.isEmpty
            ? "an administrator can name a folder for members' lists in [lists] member_file_folders"
            : "or place the file under \(memberFolders.joined(separator: " or "))"
        return "file:// sources are an administrator's: ask one to run `sudo scrolloff lists add file://\(path)`, "
            + (memberFolders.isEmpty ? "or \(folders)." : "\(folders).")
    }

    static func components(of path: String) -> [String]? {
        guard path.hasPrefix("/") else { return nil }
        let parts = path.split(separator: "/", omittingEmptySubsequences: true).map(String.init)
        guard !parts.contains(where: { $0 == "." || $0 == ".." }), !path.utf8.contains(0) else { return nil }
        return parts
    }

    /// Whether the reader's ids give `want` (4 read, 1 search) on a file with `info`, the way the
    /// kernel decides it from the mode bits: the owner's bits for the owner, else the group's for
    /// a member of the file's group, else the others'. No reader: allowed.
    func readerMay(_ want: mode_t, _ info: stat) -> Bool {
        guard let reader else { return true }
        let mode = info.st_mode
        if reader.uid == info.st_uid { return mode & (want << 6) != 0 }
        if reader.gid == info.st_gid || reader.groups.contains(info.st_gid) { return mode & (want << 3) != 0 }
        return mode & want != 0
    }
}

/// An IPv4 or IPv6 network (`192.0.2.0/24`, `::1`), for `[lists] allow_private_hosts`.
public struct AddressNetwork: Sendable, Equatable, CustomStringConvertible {
    /// 4 or 16 bytes.
    public let bytes: [UInt8]
    public let prefix: Int

    /// Nil unless `text` is a numeric address, optionally with `/prefix`.
    public init?(_ text: String) {
        let parts = text.split(separator: "/", maxSplits: 1, omittingEmptySubsequences: false)
        guard let address = IPAddressBytes.parse(String(parts[0])) else { return nil }
        let bits = address.count * 8
        var prefix = bits
        if parts.count == 2 {
            guard let p = Int(parts[1]), (0...bits).contains(p), parts[1].allSatisfy(\.isASCII) else { return nil }
            prefix = p
        }
        bytes = address
        self.prefix = prefix
    }

    public var description: String {
        let text = IPAddressBytes.text(bytes)
        return prefix == bytes.count * 8 ? text : "\(text)/\(prefix)"
    }

    /// Whether `address` (4 or 16 bytes) lies in this network. An IPv4-mapped IPv6 address
    /// (`::ffff:a.b.c.d`) counts as its IPv4 address.
    public func contains(_ address: [UInt8]) -> Bool {
        let address = IPAddressBytes.unmapped(address)
        guard address.count == bytes.count else { return false }
        var left = prefix
        for i in 0..<bytes.count where left > 0 {
            let take = min(8, left)
            let mask: UInt8 = take == 8 ? 0xFF : ~(0xFF >> UInt8(take))
            if address[i] & mask != bytes[i] & mask { return false }
            left -= take
        }
        return true
    }
}

/// Numeric addresses as bytes, through inet_pton.
enum IPAddressBytes {
    static func parse(_ text: String) -> [UInt8]? {
        var v4 = in_addr()
        if inet_pton(AF_INET, text, &v4) == 1 { return withUnsafeBytes(of: &v4) { Array($0) } }
        var v6 = in6_addr()
        if inet_pton(AF_INET6, text, &v6) == 1 { return withUnsafeBytes(of: &v6) { Array($0) } }
        return nil
    }

    static func text(_ bytes: [UInt8]) -> String {
        var buffer = [CChar](repeating: 0, count: Int(INET6_ADDRSTRLEN))
        let family = bytes.count == 4 ? AF_INET : AF_INET6
        let ok = bytes.withUnsafeBytes { inet_ntop(family, $0.baseAddress, &buffer, socklen_t(buffer.count)) } != nil
        return ok ? String(cString: buffer) : bytes.map(String.init).joined(separator: ".")
    }

    /// `::ffff:a.b.c.d` as `a.b.c.d`; anything else unchanged.
    static func unmapped(_ bytes: [UInt8]) -> [UInt8] {
        guard bytes.count == 16, bytes[0..<10].allSatisfy({ $0 == 0 }), bytes[10] == 0xFF, bytes[11] == 0xFF else { return bytes }
        return Array(bytes[12..<16])
    }
}
