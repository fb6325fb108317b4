#if canImport(Glibc)
import Glibc
#endif

/// Reads a whole file with POSIX calls; Foundation is not needed on the server's paths.
package enum FileBytes {
    package struct ReadError: Error, CustomStringConvertible {
        package var description: String
    }

    /// Files larger than this are refused rather than read into memory (a 1,000,000-name list is ~25 MB).
    static let maximumSize = 512 * 1024 * 1024

    package static func read(path: String) throws(ReadError) -> [UInt8] {
        let fd = open(path, O_RDONLY | O_CLOEXEC)
        guard fd >= 0 else { throw ReadError(description: String(cString: strerror(errno))) }
        defer { close(fd) }
        var result: [UInt8] = []
        var chunk = [UInt8](repeating: 0, count: 1 << 16)
        while true {
            let count = chunk.withUnsafeMutableBytes { Glibc.read(fd, $0.baseAddress, $0.count) }
            if count < 0 {
                if errno == EINTR { continue }
                throw ReadError(description: String(cString: strerror(errno)))
            }
            if count == 0 { break }
            result.append(contentsOf: chunk[0..<count])
            guard result.count <= maximumSize else {
                throw ReadError(description: "larger than \(maximumSize / 1_048_576) MiB")
            }
        }
        return result
    }
}
