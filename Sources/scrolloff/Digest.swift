import ArgumentParser
import ControlAPI

/// `scrolloff digest` (SPEC §13): the latest weekly digest, written Sunday at 19:00 in the
/// profile's zone.
struct Digest: ParsableCommand {
    static let configuration = CommandConfiguration(abstract: "Your week in numbers: the digest written Sunday evening.")

    @OptionGroup var options: GlobalOptions

    func run() throws {
        let answer = try options.call(ControlEndpoints.digest)
        options.emit(answer) {
            guard let digest = answer.digest else {
                print("No weekly digest yet. The first is written on Sunday at 19:00 (\(TimeWords.clock(answer.nextAt, now: answer.now))).")
                return
            }
            print(StatsDashboard.text(digest, title: "Your week"), terminator: "")
            print(Terminal.dim("Next digest: \(TimeWords.clock(answer.nextAt, now: answer.now))."))
        }
    }
}
