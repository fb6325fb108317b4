import ArgumentParser
import Helper
import Logging

struct Start: AsyncParsableCommand {
    static let configuration = CommandConfiguration(
        abstract: "Start the helper in the foreground with the embedded defaults unless flags say otherwise."
    )

    @Option(name: .customLong("state-dir"), help: "Folder for the database and downloaded lists.")
    var stateDirectory: String?

    @Option(name: .customLong("listen"), help: "ADDR:PORT to serve DNS on; repeat for more. Port 0 picks a free one.")
    var listen: [String] = []

    func run() async throws {
        var paths = RuntimePaths.current()
        if let stateDirectory { paths.stateDirectory = stateDirectory }
        if !listen.isEmpty { paths.listen = listen }
        var logger = Logger(label: "scrolloff-dns")
        logger.logLevel = .info
        try await HelperMain.run(paths: paths, logger: logger)
    }
}
