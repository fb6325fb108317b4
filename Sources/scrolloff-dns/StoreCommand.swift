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
            let from = try Self.open(source, passwordFile: passwordFile)
            let to = try Self.open(target, passwordFile: passwordFile)
            do {
                let report = try StoreCopy.copy(from: from, to: to, force: force)
                let total = report.rows.map(\.count).reduce(0, +)
                print("Copied \(total) rows from \(source) to \(target), each read back and compared: "
                      + report.rows.filter { $0.count > 0 }.map { "\($0.table) \($0.count)" }.joined(separator: ", ") + ".")
            } catch {
                throw MaintenanceFailure("store copy: \(error)")
            }
        }

        static func open(_ text: String, passwordFile: String?) throws -> StoreCopy.Endpoint {
            if text.hasPrefix("sqlite:") {
                var path = String(text.dropFirst("sqlite:".count))
                if path.hasSuffix("/scrolloff.sqlite") { path = String(path.dropLast("/scrolloff.sqlite".count)) }
                guard path.hasPrefix("/") else { throw MaintenanceFailure("\(text): write sqlite:/absolute/state/folder") }
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
    }
}
