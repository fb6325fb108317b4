import Foundation
import HostsFile
import Synchronization
import Testing

/// The writer on real files in a temporary folder: mode, owner, backup, no needless writes.
struct HostsFileWriterTests {
    struct Folder: ~Copyable {
        let path: String
        init() throws {
            path = NSTemporaryDirectory() + "hosts-writer-\(UUID().uuidString)"
            try FileManager.default.createDirectory(atPath: path, withIntermediateDirectories: true)
        }
        deinit { try? FileManager.default.removeItem(atPath: path) }
        func file(_ bytes: [UInt8], mode: Int = 0o644) throws -> String {
            let file = path + "/hosts"
            try Data(bytes).write(to: URL(fileURLWithPath: file))
            try FileManager.default.setAttributes([.posixPermissions: mode], ofItemAtPath: file)
            return file
        }
    }

    static func contents(_ path: String) throws -> [UInt8] { Array(try Data(contentsOf: URL(fileURLWithPath: path))) }
    static func attributes(_ path: String) throws -> [FileAttributeKey: Any] { try FileManager.default.attributesOfItem(atPath: path) }

    @Test func first_change_saves_the_original_as_backup_and_later_changes_keep_it() throws {
        let folder = try Folder()
        let original = Array("127.0.0.1 localhost\r\n10.0.0.2 nas".utf8)
        let path = try folder.file(original)
        let writer = HostsFileWriter(path: path)
        #expect(try writer.setSection(names: ["instagram.com"]) == .written(inPlace: false))
        #expect(try Self.contents(writer.backupPath) == original)
        #expect(try writer.setSection(names: ["tiktok.com"]) == .written(inPlace: false))
        #expect(try Self.contents(writer.backupPath) == original)
        let text = String(decoding: try Self.contents(path), as: UTF8.self)
        #expect(text.hasPrefix("# BEGIN scrolloff\r\n"))
        #expect(text.contains("0.0.0.0 tiktok.com\r\n:: tiktok.com\r\n") && !text.contains("instagram"))
        #expect(try writer.removeSection() == .written(inPlace: false))
        #expect(try Self.contents(path) == original)
    }

    @Test func mode_and_owner_survive_the_rename() throws {
        let folder = try Folder()
        let path = try folder.file(Array("127.0.0.1 localhost\n".utf8), mode: 0o640)
        guard chown(path, 4321, 8765) == 0 else {
            // Only root may give a file away; CI and `make test` run as root.
            Issue.record("chown needs root: \(errno)")
            return
        }
        try HostsFileWriter(path: path).setSection(names: ["x.com"])
        let attributes = try Self.attributes(path)
        #expect((attributes[.posixPermissions] as? Int) == 0o640)
        #expect((attributes[.ownerAccountID] as? Int) == 4321)
        #expect((attributes[.groupOwnerAccountID] as? Int) == 8765)
    }

    @Test func reapplying_the_same_names_leaves_the_file_untouched_same_inode_and_mtime() throws {
        let folder = try Folder()
        let path = try folder.file(Array("127.0.0.1 localhost\n".utf8))
        let writer = HostsFileWriter(path: path)
        try writer.setSection(names: ["a.com", "b.com"])
        let before = try Self.attributes(path)
        Thread.sleep(forTimeInterval: 0.02)
        #expect(try writer.setSection(names: ["b.com", "a.com", "A.com."]) == .unchanged)
        let after = try Self.attributes(path)
        #expect((before[.modificationDate] as? Date) == (after[.modificationDate] as? Date))
        #expect((before[.systemFileNumber] as? Int) == (after[.systemFileNumber] as? Int))
    }

    @Test func nothing_blocked_on_a_file_without_section_writes_nothing_not_even_a_backup() throws {
        let folder = try Folder()
        let path = try folder.file(Array("127.0.0.1 localhost".utf8))
        let writer = HostsFileWriter(path: path)
        #expect(try writer.setSection(names: [String]()) == .unchanged)
        #expect(!FileManager.default.fileExists(atPath: writer.backupPath))
    }

    @Test func damaged_section_is_refused_and_the_file_left_as_it_was() throws {
        let folder = try Folder()
        let damaged = Array("127.0.0.1 localhost\n# BEGIN scrolloff\n0.0.0.0 x.com\n".utf8)
        let path = try folder.file(damaged)
        let writer = HostsFileWriter(path: path)
        #expect(throws: HostsFileError.damagedSection(.beginWithoutEnd(begin: 2))) { try writer.setSection(names: ["y.com"]) }
        #expect(throws: HostsFileError.damagedSection(.beginWithoutEnd(begin: 2))) { try writer.removeSection() }
        #expect(try Self.contents(path) == damaged)
        #expect(!FileManager.default.fileExists(atPath: writer.backupPath))
    }

    @Test func missing_file_is_an_error_that_names_the_path_and_the_flag() throws {
        let folder = try Folder()
        let writer = HostsFileWriter(path: folder.path + "/nope")
        do {
            try writer.setSection(names: ["x.com"])
            Issue.record("writing a missing file succeeded")
        } catch {
            #expect(error == .io(operation: "read", path: folder.path + "/nope", errno: ENOENT))
            #expect(error.description.contains("--hosts-file"))
        }
    }

    @Test func no_temporary_file_is_left_behind() throws {
        let folder = try Folder()
        let path = try folder.file(Array("a\n".utf8))
        let writer = HostsFileWriter(path: path)
        for names in [["x.com"], ["y.com"], []] { try writer.setSection(names: names) }
        let left = try FileManager.default.contentsOfDirectory(atPath: folder.path).sorted()
        #expect(left == ["hosts", "hosts.scrolloff.bak"])
    }

    @Test func leftovers_of_a_killed_write_are_removed_and_nothing_else() throws {
        let folder = try Folder()
        let path = try folder.file(Array("a\n".utf8))
        for name in [".hosts.scrolloff-AbC123", ".hosts.scrolloff-notes.txt", "hosts.scrolloff.bak", ".other.scrolloff-XyZ789"] {
            FileManager.default.createFile(atPath: folder.path + "/" + name, contents: Data("x".utf8))
        }
        #expect(HostsFileWriter(path: path).removeLeftovers() == 1)
        let left = try FileManager.default.contentsOfDirectory(atPath: folder.path).sorted()
        #expect(left == [".hosts.scrolloff-notes.txt", ".other.scrolloff-XyZ789", "hosts", "hosts.scrolloff.bak"])
    }

    /// `command > /etc/hosts` truncates the file when the shell opens it and writes when the
    /// command has output: a rename in between would send that output to an inode no longer in the
    /// folder. Asked to wait, the writer leaves the file alone while another process holds it open
    /// for writing, and names that process.
    @Test func a_file_another_process_holds_open_for_writing_is_left_alone_until_it_is_closed() throws {
        let folder = try Folder()
        let path = try folder.file(Array("127.0.0.1 localhost\n".utf8))
        let writer = HostsFileWriter(path: path)
        // The shell holds the file until the test lets it go (a line on a FIFO), not for a fixed
        // time: on a busy machine a 1.5 s hold had run out before the scan reached the shell.
        let go = folder.path + "/go"
        #expect(mkfifo(go, 0o600) == 0)
        let shell = Process()
        shell.executableURL = URL(fileURLWithPath: "/bin/sh")
        shell.arguments = ["-c", "exec > \"$0\"; read line < \"$1\"; printf '127.0.0.1 localhost\\n10.0.0.9 mine.lan\\n'", path, go]
        try shell.run()
        defer { kill(shell.processIdentifier, SIGKILL) }
        for _ in 0..<200 where (try? Self.contents(path).isEmpty) != true { Thread.sleep(forTimeInterval: 0.01) }
        #expect(try Self.contents(path).isEmpty, "the shell has not truncated the file")
        // The lease test sees it too, without naming it (what a helper without CAP_SYS_PTRACE has).
        #expect(OpenWriters.anyWriter(path: path) == true)
        let waited = try writer.apply(waitForWriters: true) { HostsSection.render(names: ["instagram.com"], lineBreak: $0) }
        guard case .writersOpen(let pids) = waited.outcome else {
            Issue.record("written while the shell held the file: \(waited.outcome)")
            return
        }
        #expect(pids.contains(shell.processIdentifier), "\(pids)")
        #expect(try Self.contents(path).isEmpty, "written while the shell still held the file")
        // Let it go: the shell may still be on its way to the FIFO's open (ENXIO until then).
        #expect(Self.poll(seconds: 5) {
            let fd = open(go, O_WRONLY | O_NONBLOCK)
            guard fd >= 0 else { return false }
            defer { close(fd) }
            return write(fd, "go\n", 3) == 3
        })
        shell.waitUntilExit()
        let applied = try writer.apply(waitForWriters: true) { HostsSection.render(names: ["instagram.com"], lineBreak: $0) }
        #expect(applied.outcome == .written(inPlace: false))
        let text = String(decoding: try Self.contents(path), as: UTF8.self)
        #expect(text.hasPrefix("# BEGIN scrolloff\n") && text.hasSuffix("# END scrolloff\n127.0.0.1 localhost\n10.0.0.9 mine.lan\n"), "\(text)")
    }

    @Test func readers_of_the_file_do_not_hold_the_writer_back() throws {
        let folder = try Folder()
        let path = try folder.file(Array("127.0.0.1 localhost\n".utf8))
        let reader = Process()
        reader.executableURL = URL(fileURLWithPath: "/bin/sh")
        reader.arguments = ["-c", "exec 3< \"$0\"; sleep 3", path]
        try reader.run()
        defer { reader.terminate() }
        Thread.sleep(forTimeInterval: 0.2)
        #expect(OpenWriters.of(path: path).isEmpty)
        #expect(OpenWriters.anyWriter(path: path) == false)
        let applied = try HostsFileWriter(path: path).apply(waitForWriters: true) { HostsSection.render(names: ["instagram.com"], lineBreak: $0) }
        #expect(applied.outcome == .written(inPlace: false))
    }

    /// A write that lands after the writer read the file (here: while it renders the section) is
    /// not replaced by the rename; the next apply keeps it.
    @Test func a_change_made_after_the_read_is_not_renamed_over() throws {
        let folder = try Folder()
        let path = try folder.file(Array("127.0.0.1 localhost\n".utf8))
        let writer = HostsFileWriter(path: path)
        let first = try writer.apply(waitForWriters: true) { lineBreak in
            let handle = FileHandle(forWritingAtPath: path)!
            handle.seekToEndOfFile()
            handle.write(Data("10.0.0.9 mine.lan\n".utf8))
            handle.closeFile()
            return HostsSection.render(names: ["instagram.com"], lineBreak: lineBreak)
        }
        #expect(first.outcome == .writersOpen([]))
        #expect(String(decoding: try Self.contents(path), as: UTF8.self) == "127.0.0.1 localhost\n10.0.0.9 mine.lan\n")
        let second = try writer.apply(waitForWriters: true) { HostsSection.render(names: ["instagram.com"], lineBreak: $0) }
        #expect(second.outcome == .written(inPlace: false))
        #expect(String(decoding: try Self.contents(path), as: UTF8.self).hasSuffix("# END scrolloff\n127.0.0.1 localhost\n10.0.0.9 mine.lan\n"))
    }

    /// A file only root may read, and the hosts path made a symbolic link to it (as a member with
    /// write access to the folder, or a careless `ln -sf`, could): the root helper must neither read
    /// it nor put a copy of it in the hosts file's place.
    @Test func a_symbolic_link_in_place_of_the_hosts_file_is_refused_and_neither_followed_nor_replaced() throws {
        let folder = try Folder()
        let secret = folder.path + "/secret"
        try Data("root:$6$hash:20000:0:99999:7:::\n".utf8).write(to: URL(fileURLWithPath: secret))
        chmod(secret, 0o600)
        let path = folder.path + "/hosts"
        #expect(symlink(secret, path) == 0)
        let writer = HostsFileWriter(path: path)
        #expect(throws: HostsFileError.notARegularFile(path: path, found: .symlink(target: secret))) {
            try writer.setSection(names: ["instagram.com"])
        }
        #expect(throws: HostsFileError.notARegularFile(path: path, found: .symlink(target: secret))) { try writer.read() }
        // The link is still a link to the same file, the file is untouched, and no copy of it exists.
        var st = stat()
        #expect(lstat(path, &st) == 0 && st.st_mode & S_IFMT == S_IFLNK)
        #expect(String(decoding: try Self.contents(secret), as: UTF8.self) == "root:$6$hash:20000:0:99999:7:::\n")
        let left = try FileManager.default.contentsOfDirectory(atPath: folder.path).sorted()
        #expect(left == ["hosts", "secret"], "\(left)")
        // Said so that a person knows what was found and what to do.
        let error = HostsFileError.notARegularFile(path: path, found: .symlink(target: secret))
        #expect(error.description.contains("a symbolic link to \(secret)") && error.description.contains("Nothing was read or changed"))
        #expect(error.fix?.contains("sudo rm \(path)") == true && error.fix?.contains("--hosts-file") == true)
    }

    /// A FIFO in the file's place used to hang the read (open blocks until a writer comes); a
    /// folder was read as an error number. Both are refused at once, by what they are.
    @Test func a_fifo_or_a_folder_in_place_of_the_hosts_file_is_refused_at_once() throws {
        let folder = try Folder()
        let path = folder.path + "/hosts"
        #expect(mkfifo(path, 0o644) == 0)
        let done = DispatchSemaphore(value: 0)
        let outcome = Box()
        Thread.detachNewThread {
            let result = Result { () throws(HostsFileError) in try HostsFileWriter(path: path).setSection(names: ["x.com"]) }
            outcome.value.withLock { $0 = result }
            done.signal()
        }
        if done.wait(timeout: .now() + 5) == .timedOut {
            // Let the stuck open go: a writer on the FIFO releases it.
            let unblock = open(path, O_WRONLY | O_NONBLOCK)
            if unblock >= 0 { close(unblock) }
            _ = done.wait(timeout: .now() + 5)
            Issue.record("reading a FIFO in place of the hosts file hung for 5 s")
        }
        #expect(outcome.value.withLock { $0 } == .failure(.notARegularFile(path: path, found: .other)))
        unlink(path)
        #expect(mkdir(path, 0o755) == 0)
        #expect(throws: HostsFileError.notARegularFile(path: path, found: .directory)) { try HostsFileWriter(path: path).setSection(names: ["x.com"]) }
    }

    /// `chattr +i /etc/hosts` makes the rename fail with EPERM, even for root. That used to be
    /// reported as "permission denied" with advice about the unit's ReadWritePaths, which cannot
    /// help; it is the flag, and `chattr -i` is what to do. The file stays as it was, mode 0644.
    @Test func an_immutable_hosts_file_is_reported_as_such_with_chattr_minus_i_and_left_as_it_was() throws {
        let folder = try Folder()
        let original = Array("127.0.0.1 localhost\n".utf8)
        let path = try folder.file(original, mode: 0o644)
        guard Self.chattr("+i", path) else {
            // ext4 (the tests' /tmp) supports it; a file system without inode flags cannot be tested here.
            Issue.record("chattr +i failed on \(path): needs root and a file system with inode flags")
            return
        }
        defer { _ = Self.chattr("-i", path) }
        let writer = HostsFileWriter(path: path)
        do {
            try writer.setSection(names: ["instagram.com"])
            Issue.record("an immutable file was written")
        } catch {
            #expect(error == .attributeForbids(operation: "replace", path: path, flag: .immutable))
            #expect(error.description.contains("sudo chattr -i \(path)") && !error.description.contains("ReadWritePaths"), "\(error)")
            #expect(error.fix?.contains("sudo chattr -i \(path)") == true)
        }
        #expect(try Self.contents(path) == original)
        #expect((try Self.attributes(path)[.posixPermissions] as? Int) == 0o644)
        let left = try FileManager.default.contentsOfDirectory(atPath: folder.path).filter { $0.hasPrefix(".hosts.scrolloff-") }
        #expect(left.isEmpty, "temporary files left: \(left)")
        // Once the flag is gone the same writer succeeds, and the mode is still the file's own.
        #expect(Self.chattr("-i", path))
        #expect(try writer.setSection(names: ["instagram.com"]) == .written(inPlace: false))
        #expect((try Self.attributes(path)[.posixPermissions] as? Int) == 0o644)
    }

    /// On a busy machine processes start and exit all through the scan of /proc: each one that is
    /// gone by the time its turn comes (no fd folder, no fdinfo, a stat that fails) must be passed
    /// over, and the scan must go on to the process that does hold the file open.
    @Test func the_writer_is_found_while_other_processes_start_and_exit_during_the_scan() throws {
        let folder = try Folder()
        let path = try folder.file(Array("127.0.0.1 localhost\n".utf8))
        // Test threads block SIGTERM and a child inherits the mask: SIGKILL ends both for sure.
        let holder = Process()
        holder.executableURL = URL(fileURLWithPath: "/bin/sh")
        holder.arguments = ["-c", "exec 3>>\"$0\"; exec sleep 60", path]
        try holder.run()
        defer { kill(holder.processIdentifier, SIGKILL); holder.waitUntilExit() }
        // Short-lived processes, some holding the same file for writing as they exit: bounded in
        // count (3,000) and in time (the loop below stops after 300 scans or 15 s, then kills it).
        let churn = Process()
        churn.executableURL = URL(fileURLWithPath: "/bin/sh")
        churn.arguments = ["-c", "i=0; while [ $i -lt 300 ]; do for j in 1 2 3 4 5 6 7 8 9 10; do (exec 4>>\"$0\"; exit 0) & done; wait; i=$((i+1)); done", path]
        try churn.run()
        defer { kill(churn.processIdentifier, SIGKILL); churn.waitUntilExit() }
        var st = stat()
        #expect(stat(path, &st) == 0)
        // The holder is found once its `exec 3>>` has run.
        #expect(Self.poll(seconds: 5) { OpenWriters.of(path: path).contains(holder.processIdentifier) })
        var missed = 0, scans = 0
        let deadline = Date().addingTimeInterval(15)
        while scans < 300, Date() < deadline, churn.isRunning {
            let pids = OpenWriters.of(device: UInt64(st.st_dev), inode: UInt64(st.st_ino))
            if !pids.contains(holder.processIdentifier) { missed += 1 }
            scans += 1
        }
        #expect(scans >= 20, "only \(scans) scans ran while processes came and went")
        #expect(missed == 0, "the holder was missed in \(missed) of \(scans) scans")
    }

    static func poll(seconds: Double, _ condition: () -> Bool) -> Bool {
        let deadline = Date().addingTimeInterval(seconds)
        while Date() < deadline {
            if condition() { return true }
            Thread.sleep(forTimeInterval: 0.01)
        }
        return condition()
    }

    final class Box: Sendable {
        let value = Mutex<Result<HostsFileWriter.Outcome, HostsFileError>?>(nil)
    }

    static func chattr(_ flag: String, _ path: String) -> Bool {
        let process = Process()
        process.executableURL = URL(fileURLWithPath: "/usr/bin/chattr")
        process.arguments = [flag, path]
        guard (try? process.run()) != nil else { return false }
        process.waitUntilExit()
        return process.terminationStatus == 0
    }
}
