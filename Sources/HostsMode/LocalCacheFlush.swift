import Dispatch
import Foundation
import Logging
#if canImport(Glibc)
import Glibc
#endif

/// Tells the machine's own resolver caches that the hosts file changed (SPEC §10): nscd keeps hosts
/// answers for an hour by default, and a blocked name looked up just before the window would
/// otherwise stay open that long. systemd-resolved rereads /etc/hosts by itself, but its cache of
/// earlier DNS answers for the name is flushed too.
package struct LocalCacheFlush: Sendable {
    /// A program and its arguments, run when the program exists.
    let commands: [[String]]

    static let system = LocalCacheFlush(commands: [
        ["/usr/bin/resolvectl", "flush-caches"],
        ["/usr/sbin/nscd", "-i", "hosts"],
    ])

    /// Starts each present command in the background and reaps it there: a slow or hung D-Bus
    /// must not hold up the next hosts-file check. Failures are logged at debug (no nscd running
    /// is the common case, not a problem).
    func run(logger: Logger) {
        for command in commands where access(command[0], X_OK) == 0 {
            DispatchQueue.global(qos: .utility).async {
                let status = Self.spawnAndWait(command)
                if status != 0 {
                    logger.debug("cache flush failed", metadata: ["command": "\(command.joined(separator: " "))", "status": "\(status)"])
                }
            }
        }
    }

    static func spawnAndWait(_ command: [String]) -> Int32 {
        var actions = posix_spawn_file_actions_t()
        posix_spawn_file_actions_init(&actions)
        defer { posix_spawn_file_actions_destroy(&actions) }
        for fd: Int32 in [0, 1, 2] { posix_spawn_file_actions_addopen(&actions, fd, "/dev/null", fd == 0 ? O_RDONLY : O_WRONLY, 0) }
        let argv = command.map { strdup($0) } + [nil]
        defer { for p in argv { free(p) } }
        var pid: pid_t = 0
        guard posix_spawn(&pid, command[0], &actions, nil, argv, environ) == 0 else { return -1 }
        var status: Int32 = 0
        while waitpid(pid, &status, 0) < 0 && errno == EINTR {}
        return status
    }
}
