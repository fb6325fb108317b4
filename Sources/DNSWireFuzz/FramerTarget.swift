// The TCP framer (RFC 1035 §4.2.2, RFC 7766 §8) under the same fuzz input: the server's real
// `DNSFrameDecoder` in NIO's `ByteToMessageHandler`, fed the bytes in segments of arbitrary size
// as a TCP connection would deliver them.
import NIOCore
import NIOEmbedded
import Sinkhole

/// The first octet picks the segment size (1 to 256 octets); the rest is the byte stream.
/// Promises: the frames out, each with its two-octet length put back, are exactly the front of
/// the stream; what stays buffered is never a whole frame; closing with a partial frame is no
/// error other than NIO's report of exactly that partial frame; every frame then goes through the DNS codec's checks.
func checkFramer(_ input: UnsafeRawBufferPointer) {
    guard let first = input.first else { return }
    let stream = Array(input.dropFirst())
    let step = Int(first) + 1
    let channel = EmbeddedChannel()
    do {
        try channel.pipeline.syncOperations.addHandler(ByteToMessageHandler(DNSFrameDecoder()))
    } catch {
        fatalError("framer: cannot build the pipeline: \(error)")
    }
    var rebuilt: [UInt8] = []
    var frames: [[UInt8]] = []
    var offset = 0
    while offset < stream.count {
        let end = min(offset + step, stream.count)
        do {
            try channel.writeInbound(ByteBuffer(bytes: stream[offset..<end]))
        } catch {
            fail("framer threw on a segment: \(error)", input)
        }
        while let frame = try? channel.readInbound(as: ByteBuffer.self) {
            let bytes = Array(frame.readableBytesView)
            rebuilt.append(UInt8(bytes.count >> 8))
            rebuilt.append(UInt8(bytes.count & 0xFF))
            rebuilt += bytes
            frames.append(bytes)
        }
        offset = end
    }
    guard rebuilt.count <= stream.count, rebuilt[...] == stream[..<rebuilt.count] else {
        fail("framer emitted frames that are not the stream's front", input)
    }
    let left = stream[rebuilt.count...]
    if left.count >= 2 {
        let length = Int(left[left.startIndex]) << 8 | Int(left[left.startIndex + 1])
        guard left.count < 2 + length else { fail("framer kept a whole frame buffered", input) }
    }
    do {
        _ = try channel.finish(acceptAlreadyClosed: true)
    } catch ByteToMessageDecoderError.leftoverDataWhenDone(let rest) {
        // NIO reports the partial frame it drops; it must be exactly what was left.
        guard Array(rest.readableBytesView) == Array(left) else { fail("framer dropped other bytes than the partial frame", input) }
    } catch {
        fail("framer failed at the end of the stream: \(error)", input)
    }
    for frame in frames {
        frame.withUnsafeBytes { checkInvariants($0) }
    }
}
