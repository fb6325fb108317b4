#if canImport(Glibc)
import Glibc
#endif
import Foundation

/// The folders the root helper keeps its database and its control socket in must be ones no one
/// else can change (SPEC §11), checked as sshd's `StrictModes` checks a user's `~/.ssh`: the folder
/// and every parent up to `/` owned by root or by the user the helper runs as, and writable by no
/// one else. A parent that others may write is accepted only when it is root's and sticky (`/tmp`):
/// there no one can rename or remove what another user made. Otherwise the owner of a state folder
/// could move the database away (every rule gone at the next start), or serve a socket of their
/// own that takes root's `scrolloff block` and its reason.
public enum FolderTrust {
    /// What the folder is for, for the message.
    public enum Role: String, Sendable {
        case state = "state folder"
        case controlSocket = "control socket's folder"
        case configuration = "configuration file's folder"

        var flag: String {
            switch self {
            case .state: "--state-dir"
            case .controlSocket: "--control-socket"
            case .configuration: "--config"
            }
        }

        /// What the other user could do there, for the message.
        var risk: String {
            switch self {
            case .state, .controlSocket: "could move the database away or put a socket of their own in its place"
            case .configuration: "could put a configuration of their own in its place and so loosen the rules"
            }
        }
    }

    /// Checks `folder` (which must exist) and its parents.
    /// - Parameter owner: the helper's own user (root's helper: 0).
    public static func check(_ folder: String, role: Role, owner: uid_t = geteuid()) throws(FolderTrustError) {
        try checkLinks(folder, role: role, owner: owner)
        for (path, leaf) in chain(of: folder) {
            try checkOne(path, isFolderItself: leaf, role: role, folder: folder, owner: owner)
        }
        // The same for the folders the path really leads to, when a parent is a symbolic link.
        var resolved = [CChar](repeating: 0, count: Int(PATH_MAX) + 1)
        guard realpath(folder, &resolved) != nil else { throw .cannotInspect(path: folder, role: role, errno: errno) }
        let real = String(cString: resolved)
        if real != folder {
            for (path, leaf) in chain(of: real) { try checkOne(path, isFolderItself: leaf, role: role, folder: folder, owner: owner) }
        }
    }

    /// Checks the part of `folder`'s path that exists now (the folder itself, if it does): the
    /// control socket's folder is made later, by the helper, 0755.
    public static func checkExisting(_ folder: String, role: Role, owner: uid_t = geteuid()) throws(FolderTrustError) {
        var path = absolute(folder)
        var info = stat()
        while path != "/", stat(path, &info) != 0 {
            path = (path as NSString).deletingLastPathComponent
            if path.isEmpty { path = "/" }
        }
        try check(path, role: role, owner: owner)
    }

    /// A symbolic link on the way counts as a folder of its own: whoever owns it may point it
    /// elsewhere (in a sticky /tmp too, where only its owner may replace it), so the folder it
    /// leads to now proves nothing about the next start. Walked on the path as written, since
    /// `absolute` (standardizingPath) and stat() see only where the links lead.
    static func checkLinks(_ folder: String, role: Role, owner: uid_t) throws(FolderTrustError) {
        let written = folder.hasPrefix("/") ? folder : FileManager.default.currentDirectoryPath + "/" + folder
        var prefix = ""
        for component in written.split(separator: "/") where component != "." {
            prefix += "/" + component
            var link = stat()
            guard lstat(prefix, &link) == 0 else { return } // not made yet: nothing further to check
            if link.st_mode & S_IFMT == S_IFLNK, link.st_uid != 0, link.st_uid != owner {
                throw .linkOwnedByAnother(path: prefix, role: role, folder: folder, uid: link.st_uid)
            }
        }
    }

    static func absolute(_ path: String) -> String {
        if path.hasPrefix("/") { return (path as NSString).standardizingPath }
        return ((FileManager.default.currentDirectoryPath as NSString).appendingPathComponent(path) as NSString).standardizingPath
    }

    /// `folder` and each parent up to `/`, the folder first.
    static func chain(of folder: String) -> [(path: String, leaf: Bool)] {
        var path = absolute(folder)
        var out: [(String, Bool)] = [(path, true)]
        while path != "/" {
            path = (path as NSString).deletingLastPathComponent
            if path.isEmpty { path = "/" }
            out.append((path, false))
        }
        return out
    }

    private static func checkOne(_ path: String, isFolderItself: Bool, role: Role, folder: String, owner: uid_t) throws(FolderTrustError) {
        var info = stat()
        guard stat(path, &info) == 0 else { throw .cannotInspect(path: path, role: role, errno: errno) }
        if info.st_uid != 0, info.st_uid != owner {
            throw .ownedByAnother(path: path, role: role, folder: folder, uid: info.st_uid, helperUID: owner)
        }
        let othersWrite = info.st_mode & (S_IWGRP | S_IWOTH) != 0
        let stickyRoot = info.st_mode & S_ISVTX != 0 && info.st_uid == 0
        if othersWrite, isFolderItself || !stickyRoot {
            throw .writableByOthers(path: path, role: role, folder: folder, mode: info.st_mode & 0o7777, isFolderItself: isFolderItself, helperUID: owner)
        }
    }
}

/// A folder the helper will not use, with what to run to fix it.
public enum FolderTrustError: Error, Equatable, CustomStringConvertible {
    case ownedByAnother(path: String, role: FolderTrust.Role, folder: String, uid: uid_t, helperUID: uid_t)
    case writableByOthers(path: String, role: FolderTrust.Role, folder: String, mode: mode_t, isFolderItself: Bool, helperUID: uid_t)
    case linkOwnedByAnother(path: String, role: FolderTrust.Role, folder: String, uid: uid_t)
    case cannotInspect(path: String, role: FolderTrust.Role, errno: Int32)

    public var description: String {
        switch self {
        case .ownedByAnother(let path, let role, let folder, let uid, let helperUID):
            let what = path == folder ? "The \(role.rawValue) \(folder) belongs to" : "The \(role.rawValue) \(folder) lies inside \(path), which belongs to"
            return "\(what) \(Self.user(uid)), so that user \(role.risk). "
                + "scrolloff-dns uses only folders owned by root\(helperUID == 0 ? "" : " or \(Self.user(helperUID))") that no one else can write. "
                + "Fix it with `\(Self.fix(path, helperUID: helperUID, leaf: path == folder, role: role))`, or choose another \(role.flag)."
        case .writableByOthers(let path, let role, let folder, let mode, let leaf, let helperUID):
            let octal = String(mode, radix: 8)
            let what = leaf ? "The \(role.rawValue) \(folder) (mode \(octal))" : "The \(role.rawValue) \(folder) lies inside \(path) (mode \(octal)), which"
            return "\(what) can be written by users other than its owner, who \(role.risk). "
                + "scrolloff-dns uses only folders no one else can write (a parent like /tmp, root's and sticky, is fine). "
                + "Fix it with `\(Self.fix(path, helperUID: helperUID, leaf: leaf, role: role))`, or choose another \(role.flag)."
        case .linkOwnedByAnother(let path, let role, let folder, let uid):
            let what = path == folder ? "The \(role.rawValue) \(folder) is a symbolic link" : "The \(role.rawValue) \(folder) is reached through \(path), a symbolic link"
            return "\(what) owned by \(Self.user(uid)), who can point it at a folder of their own, so that user \(role.risk). "
                + "Name the folder it leads to itself, or replace the link by one root makes (`sudo rm \(path) && sudo ln -s TARGET \(path)`), "
                + "or choose another \(role.flag)."
        case .cannotInspect(let path, let role, let code):
            return "Could not check the \(role.rawValue) \(path): \(String(cString: strerror(code))) (errno \(code)). Check that it exists and can be reached."
        }
    }

    static func user(_ uid: uid_t) -> String {
        guard let entry = getpwuid(uid), let name = entry.pointee.pw_name else { return "uid \(uid)" }
        return "user \(String(cString: name)) (uid \(uid))"
    }

    /// The commands that make `path` safe: root's (or the helper user's) and 0700 for the state
    /// folder itself, 0755 for the socket's folder (members must reach the socket) and parents.
    static func fix(_ path: String, helperUID: uid_t, leaf: Bool, role: FolderTrust.Role) -> String {
        let mode = leaf && role == .state ? "0700" : "0755"
        let owner = helperUID == 0 ? "root:root" : (getpwuid(helperUID)?.pointee.pw_name.map { String(cString: $0) } ?? "\(helperUID)")
        let sudo = geteuid() == 0 || helperUID == 0 ? "sudo " : ""
        return "\(sudo)chown \(owner) \(path) && \(sudo)chmod \(mode) \(path)"
    }
}
