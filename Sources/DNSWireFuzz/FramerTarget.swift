// The TCP framer (RFC 1035 §4.2.2, RFC 7766 §8) under the same fuzz input: the server's real
// `DNSFrameDecoder.nextFrame`, the whole of what its `decode` does besides passing the frame on,
// fed the bytes in segments of arbitrary size into one buffer, as NIO's `ByteToMessageHandler`
// accumulates what a TCP connection delivers.
//
// Not through an `EmbeddedChannel`: with coverage and ASan on all of NIO, one input through the
// pipeline cost about forty parses and cut the fuzzer's runs per second tenfold. The framer lives
// in its own small module (DNSFraming, NIOCore only) so the sanitizer build does not compile the
// whole sinkhole for it.
import DNSFraming
import NIOCore

/// The first octet picks the segment size (1 to 256 octets, raised so an input is at most 32
/// segments: each costs NIO buffer work that, instrumented, slowed the parser's runs fivefold with
/// one-octet segments of 4 KiB inputs); the rest is the byte stream.
/// Promises: the frames out, each with its two-octet length put back, are exactly the front of
/// the stream, in order; what stays buffered is never a whole frame; nothing is lost or reordered
/// whatever the segment boundaries.
func checkFramer(_ input: UnsafeRawBufferPointer) {
    guard let first = input.first else { return }
    let stream = Array(input.dropFirst())
    let step = max(Int(first) + 1, (stream.count + 31) / 32)
    var buffer = ByteBuffer()
    var rebuilt: [UInt8] = []
    var offset = 0
    while offset < stream.count {
        let end = min(offset + step, stream.count)
        buffer.writeBytes(stream[offset..<end])
        while let frame = DNSFrameDecoder.nextFrame(&buffer) {
            let bytes = Array(frame.readableBytesView)
            guard bytes.count <= 65535 else { fail("framer emitted a frame longer than 65,535 octets", input) }
            rebuilt.append(UInt8(bytes.count >> 8))
            rebuilt.append(UInt8(bytes.count & 0xFF))
            rebuilt += bytes
        }
        // What NIO's handler does between reads: drop what was consumed.
        buffer.discardReadBytes()
        offset = end
    }
    guard rebuilt.count <= stream.count, rebuilt[...] == stream[..<rebuilt.count] else {
        fail("framer emitted frames that are not the stream's front", input)
    }
    let left = stream[rebuilt.count...]
    guard Array(buffer.readableBytesView) == Array(left) else { fail("framer lost or reordered buffered octets", input) }
    if left.count >= 2 {
        let length = Int(left[left.startIndex]) << 8 | Int(left[left.startIndex + 1])
        guard left.count < 2 + length else { fail("framer kept a whole frame buffered", input) }
    }
}
