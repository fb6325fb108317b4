import ArgumentParser
import Config
import Foundation

/// `scrolloff-dns config …`: about the configuration file's keys themselves.
struct ConfigCommand: ParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "config",
        abstract: "About the configuration file's keys.",
        subcommands: [Reference.self]
    )

    /// `scrolloff-dns config reference [--write FILE]`: the reference of every key, written from
    /// the declarations (Sources/Config/Settings), for docs/configuration.md.
    struct Reference: ParsableCommand {
        static let configuration = CommandConfiguration(
            abstract: "Print the reference of every configuration key (Markdown), or write it into a document between its markers."
        )

        @Option(name: .customLong("write"), help: "Replace the reference between its markers in this file (docs/configuration.md).")
        var document: String?

        func run() throws {
            func fail(_ message: String) -> Never {
                FileHandle.standardError.write(Data((message + "\n").utf8))
                Self.exit(withError: ExitCode(1))
            }
            guard let document else {
                print(ConfigurationReference.markdown())
                return
            }
            let text: String
            do { text = try String(contentsOfFile: document, encoding: .utf8) } catch {
                fail("cannot read \(document): \(error.localizedDescription)")
            }
            let updated: String
            do { updated = try ConfigurationReference.replacingSection(in: text) } catch {
                fail("\(document): \(error.description)")
            }
            guard updated != text else { return }
            do { try updated.write(toFile: document, atomically: true, encoding: .utf8) } catch {
                fail("cannot write \(document): \(error.localizedDescription)")
            }
        }
    }
}
