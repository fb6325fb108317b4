#if canImport(Glibc)
import Glibc
#elseif canImport(Darwin)
import Darwin
#endif

// Thin names for the POSIX calls whose Swift names clash with methods (`write`, `rename`).

@inline(__always)
func posixWrite(_ fd: Int32, _ buffer: UnsafeRawPointer, _ count: Int) -> Int {
    write(fd, buffer, count)
}

@inline(__always)
func posixRename(_ from: String, _ to: String) -> Int32 {
    rename(from, to)
}

/// The current thread's errno, read right after the failing call.
@inline(__always)
func lastErrno() -> Int32 { errno }
