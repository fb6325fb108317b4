import ArgumentParser
import ControlAPI
import ControlTransport
import Foundation

/// `scrolloff export --csv|--json`: the ledger and events on stdout (SPEC §12). `--csv` is RFC 4180
/// text; `--json` is `{"format": "json", "rows": [...]}` with one typed object per row (SPEC §12).
struct Export: ParsableCommand {
    static let configuration = CommandConfiguration(abstract: "Write your ledger and events to stdout as CSV (--csv) or typed JSON rows (--json).")

    @OptionGroup var options: GlobalOptions

    @Flag(name: .long, help: "RFC 4180 CSV, one line per ledger row or event.")
    var csv = false

    func validate() throws {
        if csv && options.json { throw ValidationError("Choose one format: --csv or --json.") }
        if !csv && !options.json { throw ValidationError("Say the format: `scrolloff export --csv > scrolloff.csv` or `scrolloff export --json`.") }
    }

    func run() throws {
        let client = options.client(timeoutSeconds: 120)
        if options.json {
            let response = try options.talk { () throws(ControlClientError) in try client.call(ControlEndpoints.exportRows) }
            Terminal.printJSON(response)
        } else {
            let response = try options.talk { () throws(ControlClientError) in try client.call(ControlEndpoints.export) }
            FileHandle.standardOutput.write(Data(response.text.utf8))
        }
    }
}
