// Without libFuzzer (a plain `swift build`), this executable replays saved inputs through the
// same checks, so a crasher can be reproduced in a debugger: `ControlAPIFuzz crash-1234 …`.
// The fuzz build defines SCROLLOFF_LIBFUZZER, and libFuzzer supplies `main` instead.
#if !SCROLLOFF_LIBFUZZER
import Foundation

@main
enum Replay {
    static func main() {
        for path in CommandLine.arguments.dropFirst() {
            guard let data = FileManager.default.contents(atPath: path) else {
                print("cannot open \(path); pass paths of saved fuzz inputs")
                exit(2)
            }
            checkControlInput([UInt8](data))
            print("ok \(path) (\(data.count) octets)")
        }
    }
}
#endif
