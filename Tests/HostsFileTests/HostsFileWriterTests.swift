import Foundation
import HostsFile
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
        let shell = Process()
        shell.executableURL = URL(fileURLWithPath: "/bin/sh")
        shell.arguments = ["-c", "exec > \"$0\"; sleep 1.5; printf '127.0.0.1 localhost\\n10.0.0.9 mine.lan\\n'", path]
        try shell.run()
        for _ in 0..<200 where (try? Self.contents(path).isEmpty) != true { Thread.sleep(forTimeInterval: 0.01) }
        #expect(try Self.contents(path).isEmpty, "the shell has not truncated the file")
        // The lease test sees it too, without naming it (what a helper without CAP_SYS_PTRACE has).
        #expect(OpenWriters.anyWriter(path: path) == true)
        let waited = try writer.apply(waitForWriters: true) { HostsSection.render(names: ["instagram.com"], lineBreak: $0) }
        // The shell, and its `sleep`, which inherits the shell's standard output.
        guard case .writersOpen(let pids) = waited.outcome else {
            Issue.record("written while the shell held the file: \(waited.outcome)")
            return
        }
        #expect(pids.contains(shell.processIdentifier), "\(pids)")
        #expect(try Self.contents(path).isEmpty, "written while the shell still held the file")
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
}
