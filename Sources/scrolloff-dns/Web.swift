import ArgumentParser
import Config
import Foundation
import Helper
import Logging
import PostgresStore
#if canImport(Glibc)
import Glibc
import HouseholdPage
import ServiceKit
#endif

/// `scrolloff-dns web …`: the household page (SPEC §9a).
struct Web: ParsableCommand {
    static let configuration = CommandConfiguration(
        abstract: "The household page served by the helper.",
        subcommands: [Passwd.self]
    )

    /// `scrolloff-dns web passwd NAME` (SPEC §13): sets the password an owner signs in with. NAME is
    /// a Unix user; signed in, that user's uid has on the page the rights it has on the control socket.
    struct Passwd: ParsableCommand {
        static let configuration = CommandConfiguration(
            abstract: "Set the password an owner signs in to the household page with (root only).",
            discussion: """
                NAME is the owner's Unix user name: once signed in, they may act on the profiles their uid \
                may act on with the CLI. On a terminal the password is asked twice without echo; otherwise \
                it is read from the first line of standard input. Stored as a salted scrypt hash in the \
                state folder; the running helper uses it at the next sign-in.
                """
        )

        @Argument(help: "The owner's Unix user name.")
        var name: String

        @Option(name: .customLong("config"), help: "Configuration file naming the state folder (default /etc/scrolloff/scrolloff.toml as root).")
        var configFile: String?

        @Option(name: .customLong("state-dir"), help: "The helper's state folder (default: the configuration's).")
        var stateDirectory: String?

        func run() throws {
            guard geteuid() == 0 else {
                throw ValidationError("Only root can set an owner's password: run `sudo scrolloff-dns web passwd \(name)`.")
            }
            guard OwnerPasswords.userExists(name) else {
                throw ValidationError("There is no user “\(name)” on this machine; an owner is a Unix user (see `getent passwd`).")
            }
            var overrides = ConfigurationOverrides()
            overrides.stateDirectory = stateDirectory
            let configuration: HelperConfiguration
            do {
                configuration = try ConfigurationFile.load(path: configFile, base: RuntimePaths.current(), overrides: overrides)
            } catch {
                throw ValidationError("\(error)")
            }
            // On a shared store the household's database keeps the passwords, so the one set here
            // works on every helper's page.
            var shared: PostgresStateStore?
            if configuration.store.backend == .postgresql {
                do { shared = try HouseholdStore.open(configuration.store, logger: Logger(label: "scrolloff.web.passwd")) } catch {
                    throw ValidationError("\(error); nothing was changed.")
                }
            }
            let password = try readPassword()
            do {
                try OwnerPasswords(stateDirectory: configuration.paths.stateDirectory, shared: shared).set(name: name, password: password)
            } catch {
                throw ValidationError(error.description)
            }
            print("Set the household page password of \(name)"
                  + (shared == nil ? "." : " in the household's database, for every helper's page.") + " They sign in at the page's /signin.")
        }

        func readPassword() throws -> String {
            guard isatty(0) == 1 else {
                guard let line = readLine(strippingNewline: true), !line.isEmpty else {
                    throw ValidationError("No password on standard input: give it as the first line, or run this on a terminal.")
                }
                return line
            }
            let first = try prompt("New password for \(name): ")
            let second = try prompt("Again: ")
            guard first == second else { throw ValidationError("The two passwords differ; nothing was changed.") }
            return first
        }

        /// Reads one line from the terminal with echo off, restoring the terminal whatever happens.
        func prompt(_ text: String) throws -> String {
            FileHandle.standardError.write(Data(text.utf8))
            var saved = termios()
            tcgetattr(0, &saved)
            var quiet = saved
            quiet.c_lflag &= ~tcflag_t(ECHO)
            tcsetattr(0, TCSAFLUSH, &quiet)
            defer {
                tcsetattr(0, TCSAFLUSH, &saved)
                FileHandle.standardError.write(Data("\n".utf8))
            }
            guard let line = readLine(strippingNewline: true) else { throw ValidationError("No password given; nothing was changed.") }
            return line
        }
    }
}
