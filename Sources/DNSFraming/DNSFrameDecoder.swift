import NIOCore

/// RFC 1035 §4.2.2 / RFC 7766 §8: over TCP every message is preceded by its length in two octets.
/// Emits each message without its length prefix; a zero-length frame is passed on as an empty
/// buffer (the gate drops it). Lengths are 16-bit, so a frame is at most 65,535 octets and the
/// decoder never buffers more than one frame plus its prefix.
public struct DNSFrameDecoder: ByteToMessageDecoder, Sendable {
    public typealias InboundOut = ByteBuffer

    public init() {}

    public mutating func decode(context: ChannelHandlerContext, buffer: inout ByteBuffer) throws -> DecodingState {
        guard let frame = Self.nextFrame(&buffer) else { return .needMoreData }
        context.fireChannelRead(Self.wrapInboundOut(frame))
        return .continue
    }

    public mutating func decodeLast(context: ChannelHandlerContext, buffer: inout ByteBuffer, seenEOF: Bool) throws -> DecodingState {
        // A partial frame at EOF is discarded: there is nobody to answer.
        try decode(context: context, buffer: &buffer)
    }

    /// Takes one complete frame off the front of `buffer`, or nothing if it is not all there yet.
    /// Public so the fuzz target (`DNSWireFuzz`) drives this very code without building the sinkhole.
    public static func nextFrame(_ buffer: inout ByteBuffer) -> ByteBuffer? {
        guard let length = buffer.getInteger(at: buffer.readerIndex, as: UInt16.self),
              buffer.readableBytes >= 2 + Int(length)
        else { return nil }
        buffer.moveReaderIndex(forwardBy: 2)
        return buffer.readSlice(length: Int(length))
    }
}

extension ByteBuffer {
    /// Writes `message` with its two-octet length prefix (RFC 7766 §8). Messages over 65,535
    /// octets cannot be framed; callers never produce them (the builder caps replies there).
    public mutating func writeDNSFrame(_ message: some Collection<UInt8>) {
        writeInteger(UInt16(clamping: message.count))
        writeBytes(message.prefix(65535))
    }
}
