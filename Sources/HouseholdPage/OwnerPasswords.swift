import Crypto
import Engine
import Foundation
import Store
import _CryptoExtras
#if canImport(Glibc)
import Glibc
#endif

/// Owners' passwords for the household page (SPEC §9a: "password set by root, stored as a salted
/// slow hash"). One line per owner in `<state dir>/web-owners` (root, 0600):
///
///     alex:scrypt$32768$8$1$<salt base64>$<hash base64>
///
/// scrypt (RFC 7914) from swift-crypto's `_CryptoExtras`: memory-hard, so guessing on a GPU costs
/// memory as well as time. N = 2^15, r = 8, p = 1 (32 MiB, about 0.1 s on a small router's core)
/// are the interactive-login parameters Go's x/crypto/scrypt recommends; sign-ins are also capped
/// per device (`WebRateLimiter`). The parameters are stored with each hash so they can be raised
/// later without breaking the passwords already set. The helper reads the file at every
/// sign-in, so a password set with `scrolloff-dns web passwd` applies without a restart.
///
/// On a shared store (`[store] backend = "postgresql"`) the same records live in the household's
/// database instead (`WebAccountStore`), so a password set through one helper works on every
/// helper's page; the file is then not read.
public struct OwnerPasswords: Sendable {
    public static let fileName = "web-owners"
    public static let minimumLength = 8

    public let path: String
    /// The household's database, when the helpers share one: the records live there.
    public let shared: (any WebAccountStore)?

    public init(stateDirectory: String, shared: (any WebAccountStore)? = nil) {
        path = stateDirectory + "/" + Self.fileName
        self.shared = shared
    }

    struct Parameters: Equatable {
        var rounds = 1 << 15
        var blockSize = 8
        var parallelism = 1
    }

    /// Sets (or replaces) `name`'s password: a new random salt every time.
    /// - Throws: `OwnerPasswordError` saying what to change.
    public func set(name: String, password: String) throws(OwnerPasswordError) {
        guard password.count >= Self.minimumLength else { throw .tooShort(Self.minimumLength) }
        guard Self.isValidName(name) else { throw .badName(name) }
        var salt = [UInt8](repeating: 0, count: 16)
        var generator = SystemRandomNumberGenerator()
        for i in salt.indices { salt[i] = UInt8.random(in: 0...255, using: &generator) }
        let parameters = Parameters()
        let hash: [UInt8]
        do { hash = try Self.derive(password, salt: salt, parameters) } catch { throw .hashing("\(error)") }
        let record = "scrypt$\(parameters.rounds)$\(parameters.blockSize)$\(parameters.parallelism)$"
            + "\(Data(salt).base64EncodedString())$\(Data(hash).base64EncodedString())"
        if let shared {
            do { try shared.setOwnerPasswordRecord(name: name, record: record) } catch { throw .store("\(error)") }
            return
        }
        let line = "\(name):" + record
        var lines = readLines().filter { !$0.hasPrefix(name + ":") }
        lines.append(line)
        try write(lines.joined(separator: "\n") + "\n")
    }

    /// Whether `password` is `name`'s. Unknown names cost one derivation too, so the answer's
    /// time does not tell which owners exist.
    /// A store that cannot be read answers false (no sign-in), never true.
    public func verify(name: String, password: String) -> Bool {
        let stored = record(of: name)
        guard let stored, let (parameters, salt, hash) = Self.parse(stored) else {
            _ = try? Self.derive(password, salt: [UInt8](repeating: 0, count: 16), Parameters())
            return false
        }
        guard let derived = try? Self.derive(password, salt: salt, parameters), derived.count == hash.count else { return false }
        // Constant time: every byte is compared whatever the first difference.
        var difference: UInt8 = 0
        for (a, b) in zip(derived, hash) { difference |= a ^ b }
        return difference == 0
    }

    /// The owners with a password, for the sign-in page's hint and `doctor`.
    public func names() -> [String] {
        if let shared { return (try? shared.ownerPasswordNames()) ?? [] }
        return readLines().compactMap { $0.split(separator: ":", maxSplits: 1).first.map(String.init) }
    }

    /// `name`'s record (`scrypt$…`), from the household's database or the file.
    private func record(of name: String) -> String? {
        if let shared { return try? shared.ownerPasswordRecord(name: name) }
        return readLines().first { $0.hasPrefix(name + ":") }.map { String($0.dropFirst(name.count + 1)) }
    }

    /// Whether the user database knows `name`.
    public static func userExists(_ name: String) -> Bool { SystemGroups.user(named: name) != nil }

    static func isValidName(_ name: String) -> Bool {
        !name.isEmpty && name.count <= 64 && name.allSatisfy { $0.isASCII && ($0.isLetter || $0.isNumber || "._-".contains($0)) }
    }

    static func parse(_ text: String) -> (Parameters, [UInt8], [UInt8])? {
        let parts = text.split(separator: "$", omittingEmptySubsequences: false)
        guard parts.count == 6, parts[0] == "scrypt", let n = Int(parts[1]), let r = Int(parts[2]), let p = Int(parts[3]),
              let salt = Data(base64Encoded: String(parts[4])), let hash = Data(base64Encoded: String(parts[5])),
              n > 1, n <= 1 << 20, n & (n - 1) == 0, (1...32).contains(r), (1...16).contains(p), !hash.isEmpty
        else { return nil }
        return (Parameters(rounds: n, blockSize: r, parallelism: p), Array(salt), Array(hash))
    }

    static func derive(_ password: String, salt: [UInt8], _ parameters: Parameters) throws -> [UInt8] {
        let key = try KDF.Scrypt.deriveKey(
            from: Array(password.utf8), salt: salt, outputByteCount: 32, rounds: parameters.rounds,
            blockSize: parameters.blockSize, parallelism: parameters.parallelism)
        return key.withUnsafeBytes { Array($0) }
    }

    private func readLines() -> [String] {
        guard let text = try? String(contentsOfFile: path, encoding: .utf8) else { return [] }
        return text.split(separator: "\n").map(String.init).filter { !$0.isEmpty && !$0.hasPrefix("#") }
    }

    /// Temp file in the same folder, 0600 before any byte is written, fsync, rename: a reader sees
    /// the old file or the new one, never a half-written one, and never a readable one.
    private func write(_ text: String) throws(OwnerPasswordError) {
        let folder = (path as NSString).deletingLastPathComponent
        do {
            try FileManager.default.createDirectory(atPath: folder, withIntermediateDirectories: true, attributes: [.posixPermissions: 0o700])
        } catch { throw .write(path, error.localizedDescription) }
        let temporary = path + ".tmp-\(getpid())"
        let fd = open(temporary, O_WRONLY | O_CREAT | O_TRUNC | O_CLOEXEC, 0o600)
        guard fd >= 0 else { throw .write(path, String(cString: strerror(errno))) }
        let bytes = Array(text.utf8)
        let written = bytes.withUnsafeBytes { Glibc.write(fd, $0.baseAddress, $0.count) }
        let synced = fsync(fd) == 0
        close(fd)
        guard written == bytes.count, synced, rename(temporary, path) == 0 else {
            let reason = String(cString: strerror(errno))
            unlink(temporary)
            throw .write(path, reason)
        }
    }
}

extension OwnerPasswords {
    /// Where the helper checks sign-ins: one serial queue of its own. scrypt takes a moment and
    /// 32 MiB on purpose; on the Swift concurrency pool it would hold a thread the engine and the
    /// control socket need, and several at once could hold them all. One at a time caps what a
    /// burst of sign-ins costs at one core and 32 MiB, and the per-device budget caps the burst.
    public static let checking = Checker()

    public final class Checker: Sendable {
        private let queue = DispatchQueue(label: "scrolloff.web.passwords")

        public func verify(_ passwords: OwnerPasswords, name: String, password: String) async -> Bool {
            await withCheckedContinuation { continuation in
                queue.async { continuation.resume(returning: passwords.verify(name: name, password: password)) }
            }
        }
    }
}

/// Why a password was not set; each says what to do.
public enum OwnerPasswordError: Error, Sendable, CustomStringConvertible, Equatable {
    case tooShort(Int)
    case badName(String)
    case hashing(String)
    case write(String, String)
    /// The household's database refused or could not be reached.
    case store(String)

    public var description: String {
        switch self {
        case .tooShort(let n): "A password needs at least \(n) characters; a few words make a good one."
        case .badName(let name): "“\(name)” is not a user name; use the owner's Unix login name, such as alex."
        case .hashing(let text): "The password could not be hashed (\(text)); nothing was changed."
        case .write(let path, let reason): "Cannot write \(path): \(reason). Run as root, with the state folder the helper uses (--state-dir)."
        case .store(let reason): "The household's database did not take the password (\(reason)); nothing was changed. Check that it runs and try again."
        }
    }
}
