// Without libFuzzer (a plain `swift build`), this executable replays saved inputs through the
// same checks, so a crasher can be reproduced in a debugger: `DNSWireFuzz crash-1234 …`.
// The fuzz build defines DNSWIRE_LIBFUZZER, and libFuzzer supplies `main` instead.
#if !DNSWIRE_LIBFUZZER
#if canImport(Glibc)
import Glibc
#elseif canImport(Darwin)
import Darwin
#endif

@main
enum Replay {
    static func main() {
        for path in CommandLine.arguments.dropFirst() {
            guard let file = fopen(path, "rb") else {
                print("cannot open \(path); pass paths of saved fuzz inputs")
                exit(2)
            }
            var bytes: [UInt8] = []
            var chunk = [UInt8](repeating: 0, count: 4096)
            while true {
                let count = fread(&chunk, 1, chunk.count, file)
                if count <= 0 { break }
                bytes += chunk[0..<count]
            }
            fclose(file)
            bytes.withUnsafeBytes {
                checkInvariants($0)
                checkFramer($0)
            }
            print("ok \(path) (\(bytes.count) octets)")
        }
    }
}
#endif
