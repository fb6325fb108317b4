import ArgumentParser
import ControlAPI
import Foundation

/// `scrolloff export --csv`: the ledger and events as CSV on stdout (SPEC §12).
struct Export: ParsableCommand {
    static let configuration = CommandConfiguration(abstract: "Write your ledger and events as CSV to stdout.")

    @OptionGroup var options: GlobalOptions

    @Flag(name: .long, help: "CSV (the only format so far).")
    var csv = false

    func validate() throws {
        if !csv && !options.json { throw ValidationError("Say the format: `scrolloff export --csv > scrolloff.csv`.") }
    }

    /// With `--json` the CSV text comes as one field, so scripts get the same envelope as elsewhere.
    struct JSONExport: Encodable {
        var format = "csv"
        var csv: String
    }

    func run() throws {
        let client = options.client(timeoutSeconds: 120)
        let response = try options.talk { () throws(ControlClientError) in
            try client.call(ControlEndpoints.export)
        }
        if options.json {
            Terminal.printJSON(JSONExport(csv: response.text))
        } else {
            FileHandle.standardOutput.write(Data(response.text.utf8))
        }
    }
}
