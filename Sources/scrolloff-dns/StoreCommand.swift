import ArgumentParser
import Foundation
import PostgresStore
import Store

/// `scrolloff-dns store …`: where the state lives (`[store]`, docs/operations.md).
struct StoreCommand: ParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "store",
        abstract: "The state's database: copy it between SQLite and a household's PostgreSQL.",
        subcommands: [Copy.self]
    )

    /// `scrolloff-dns store copy --from sqlite:PATH --to postgresql://…` (and back).
    struct Copy: ParsableCommand {
        static let configuration = CommandConfiguration(
            abstract: "Copy every rule, wallet, ledger row and event from one store to another, checked row for row (stop the helpers first).",
            discussion: """
                A store is sqlite:FOLDER (the state folder, or its scrolloff.sqlite) or a postgresql:// URL as \
                [store] url takes it. The target must hold no rows, or --force replaces them. Downloaded lists, \
                passwords and each helper's clock anchor are not copied.
                """
        )

        @Option(name: .customLong("from"), help: "The store to read: sqlite:PATH or postgresql://USER@HOST/DB.")
        var source: String

        @Option(name: .customLong("to"), help: "The store to write: sqlite:PATH or postgresql://USER@HOST/DB.")
        var target: String

        @Option(name: .customLong("password-file"), help: "A file whose first line is the PostgreSQL password.")
        var passwordFile: String?

        @Flag(help: "Replace the rows the target already holds.")
        var force = false

        func run() throws {
            let from = try Self.open(source, passwordFile: passwordFile, role: .source)
            let to = try Self.open(target, passwordFile: passwordFile, role: .target)
            do {
                let report = try StoreCopy.copy(from: from, to: to, force: force)
                let total = report.rows.map(\.count).reduce(0, +)
                print("Copied \(total) rows from \(source) to \(target), each read back and compared: "
                      + report.rows.filter { $0.count > 0 }.map { "\($0.table) \($0.count)" }.joined(separator: ", ") + ".")
            } catch {
                throw MaintenanceFailure("store copy: \(error)")
            }
        }

        enum Role { case source, target }

        static func open(_ text: String, passwordFile: String?, role: Role) throws -> StoreCopy.Endpoint {
            if text.hasPrefix("sqlite:") {
                var path = String(text.dropFirst("sqlite:".count))
                if path.hasSuffix("/scrolloff.sqlite") { path = String(path.dropLast("/scrolloff.sqlite".count)) }
                guard path.hasPrefix("/") else { throw MaintenanceFailure("\(text): write sqlite:/absolute/state/folder") }
                try checkSQLite(folder: path, named: text, role: role)
                do { return .sqlite(try Store(directory: path)) } catch { throw MaintenanceFailure("\(text): \(error)") }
            }
            do {
                var location = try PostgresLocation(parsing: text)
                if let passwordFile { location.password = try PostgresLocation.readPassword(path: passwordFile) }
                return .postgresql(try PostgresStateStore(location: location, node: "store-copy"))
            } catch let e as PostgresLocationError {
                throw MaintenanceFailure("\(text): \(e.problem); write sqlite:/var/lib/scrolloff or \(PostgresLocation.example)")
            } catch {
                throw MaintenanceFailure("\(text): \(error)")
            }
        }

        /// Opening a SQLite store creates the folder and the file when missing, runs its schema
        /// steps and sets the modes to 700 and 600; the copy runs as root. So a source must
        /// already be a state (a typo read as an empty one copied nothing and left a new folder),
        /// and neither the folder nor the file may be a symbolic link or another user's (root
        /// would write into, and take away the modes of, whatever they name).
        static func checkSQLite(folder: String, named text: String, role: Role) throws {
            let me = geteuid()
            let file = folder + (folder.hasSuffix("/") ? "" : "/") + StateFiles.databaseName
            for path in [folder, file] {
                var info = stat()
                guard lstat(path, &info) == 0 else {
                    let e = errno
                    if e == ENOENT {
                        if role == .source {
                            throw MaintenanceFailure("\(text): there is no SQLite state at \(file); name the state folder of the helper to copy "
                                + "(its state_dir, /var/lib/scrolloff when installed)")
                        }
                        // A folder that exists with other files and no state in it (sqlite:/tmp,
                        // sqlite:/etc) is not a state folder: opening it would make it 700.
                        if path == file, let inside = try? FileManager.default.contentsOfDirectory(atPath: folder), !inside.isEmpty {
                            throw MaintenanceFailure("\(text): \(folder) holds other files and no state; nothing was copied — name a new folder, "
                                + "or a helper's state folder")
                        }
                        return
                    }
                    throw MaintenanceFailure("\(text): \(path) cannot be read: \(String(cString: strerror(e)))")
                }
                if info.st_mode & S_IFMT == S_IFLNK {
                    throw MaintenanceFailure("\(text): \(path) is a symbolic link; nothing was copied — name the folder itself")
                }
                if info.st_uid != me {
                    throw MaintenanceFailure("\(text): \(path) belongs to uid \(info.st_uid), not to uid \(me) who runs this copy; nothing was copied — "
                        + (role == .source ? "copy as its owner" : "name a folder of your own (a new one is made)"))
                }
            }
        }
    }
}
