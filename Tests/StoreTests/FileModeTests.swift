import Foundation
import Testing
@testable import Store

/// Serialized: these tests change the process umask, which every other file creation would see.
@Suite(.serialized) struct FileModeTests {
    @Test(arguments: [mode_t(0), 0o022, 0o077])
    func directory_is_0700_and_database_wal_and_shm_are_0600_whatever_the_umask(umaskValue: mode_t) throws {
        let dir = TemporaryDirectory()
        defer { dir.remove() }
        let old = umask(umaskValue)
        defer { umask(old) }
        let store = try Fixture.store(in: dir)
        _ = try Fixture.busyAccount(in: store)
        #expect(mode(of: dir.stateDirectory) == 0o700)
        #expect(mode(of: dir.databasePath) == 0o600)
        #expect(mode(of: dir.databasePath + "-wal") == 0o600)
        #expect(mode(of: dir.databasePath + "-shm") == 0o600)
    }

    @Test func an_existing_open_directory_and_file_are_tightened() throws {
        let dir = TemporaryDirectory()
        defer { dir.remove() }
        try FileManager.default.createDirectory(atPath: dir.stateDirectory, withIntermediateDirectories: true,
                                                attributes: [.posixPermissions: 0o755])
        _ = FileManager.default.createFile(atPath: dir.databasePath, contents: nil, attributes: [.posixPermissions: 0o644])
        #expect(mode(of: dir.stateDirectory) == 0o755)
        _ = try Store(directory: dir.stateDirectory)
        #expect(mode(of: dir.stateDirectory) == 0o700)
        #expect(mode(of: dir.databasePath) == 0o600)
    }

    @Test func missing_parents_are_created() throws {
        let dir = TemporaryDirectory()
        defer { dir.remove() }
        let deep = dir.path + "/a/b/state"
        let store = try Store(directory: deep)
        #expect(store.path == deep + "/scrolloff.sqlite")
        #expect(mode(of: deep) == 0o700)
    }
}
