import DNSFraming
import NIOCore
import NIOEmbedded
import NIOTestUtils
import Testing
@testable import Sinkhole

/// RFC 7766 §8 length framing.
@Suite struct TCPFramingTests {
    static func frame(_ payload: [UInt8]) -> ByteBuffer {
        var buffer = ByteBufferAllocator().buffer(capacity: payload.count + 2)
        buffer.writeDNSFrame(payload)
        return buffer
    }

    @Test func framer_passes_the_verifier_for_drip_fed_and_coalesced_frames() throws {
        let payloads: [[UInt8]] = [
            Array(repeating: 0xAB, count: 12),
            [],
            Array(0..<255),
            Array(repeating: 7, count: 1500),
        ]
        let pairs = payloads.map { payload in
            (Self.frame(payload), [ByteBuffer(bytes: payload)])
        }
        try ByteToMessageDecoderVerifier.verifyDecoder(inputOutputPairs: pairs) { DNSFrameDecoder() }
    }

    @Test func partial_frame_waits_for_the_rest() {
        var buffer = ByteBuffer(bytes: [0x00, 0x05, 1, 2, 3])
        #expect(DNSFrameDecoder.nextFrame(&buffer) == nil)
        #expect(buffer.readableBytes == 5)
        buffer.writeBytes([4, 5, 0x00])
        #expect(DNSFrameDecoder.nextFrame(&buffer) == ByteBuffer(bytes: [1, 2, 3, 4, 5]))
        #expect(DNSFrameDecoder.nextFrame(&buffer) == nil)
    }

    @Test func the_largest_frame_of_65535_octets_is_decoded_whole() {
        var buffer = Self.frame(Array(repeating: 7, count: 65535))
        buffer.writeBytes([0x00, 0x01, 9])
        #expect(DNSFrameDecoder.nextFrame(&buffer)?.readableBytes == 65535)
        #expect(DNSFrameDecoder.nextFrame(&buffer) == ByteBuffer(bytes: [9]))
    }

    @Test func frame_writer_prefixes_the_length_big_endian() {
        #expect(Self.frame([9, 9, 9]) == ByteBuffer(bytes: [0x00, 0x03, 9, 9, 9]))
    }
}
