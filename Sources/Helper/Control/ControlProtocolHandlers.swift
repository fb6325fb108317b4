import ControlAPI
import NIOCore
import NIOHTTP1

/// Answers a request NIO could not parse (garbage bytes, a bad Content-Length, oversized headers)
/// with a JSON 400 and lets the decoder close the connection; the server keeps serving others.
///
/// It replaces NIO's `HTTPServerProtocolErrorHandler`, whose 400 has an empty body, so that every
/// error of the control API has the same JSON shape. Like that handler it only answers when no
/// other response has started, since a second status line inside a response would corrupt it.
final class ControlProtocolErrorHandler: ChannelDuplexHandler, RemovableChannelHandler {
    typealias InboundIn = HTTPServerRequestPart
    typealias InboundOut = HTTPServerRequestPart
    typealias OutboundIn = HTTPServerResponsePart
    typealias OutboundOut = HTTPServerResponsePart

    private var responseInFlight = false

    func channelRead(context: ChannelHandlerContext, data: NIOAny) {
        context.fireChannelRead(data)
    }

    func errorCaught(context: ChannelHandlerContext, error: any Error) {
        guard let parserError = error as? HTTPParserError else {
            context.fireErrorCaught(error)
            return
        }
        if !responseInFlight {
            let failure = ControlFailure(
                status: .badRequest, code: ControlErrorCode.malformedHTTP,
                message: "The request is not valid HTTP/1.1 (\(Self.explain(parserError))). Send a request such as "
                    + "`curl --unix-socket SOCKET http://localhost/v1/health`."
            )
            let body = ControlJSON.encode(ControlErrorEnvelope(error: failure.error))
            var headers = HTTPHeaders()
            headers.add(name: "Content-Type", value: ControlMediaType.json)
            headers.add(name: "Content-Length", value: "\(body.count)")
            headers.add(name: "Connection", value: "close")
            context.write(wrapOutboundOut(.head(HTTPResponseHead(version: .http1_1, status: .badRequest, headers: headers))), promise: nil)
            context.write(wrapOutboundOut(.body(.byteBuffer(ByteBuffer(bytes: body)))), promise: nil)
            context.writeAndFlush(wrapOutboundOut(.end(nil)), promise: nil)
            responseInFlight = false
        }
        // The decoder closes the channel after this returns; pass the error on for the log.
        context.fireErrorCaught(error)
    }

    func write(context: ChannelHandlerContext, data: NIOAny, promise: EventLoopPromise<Void>?) {
        switch unwrapOutboundIn(data) {
        case .head(let head) where head.status.code >= 200:
            responseInFlight = true
        case .end:
            responseInFlight = false
        default:
            break
        }
        context.write(data, promise: promise)
    }

    private static func explain(_ error: HTTPParserError) -> String {
        switch error {
        case .headerOverflow: return "the header section is too large"
        case .invalidContentLength, .unexpectedContentLength: return "the Content-Length is not a valid length"
        case .invalidMethod: return "unknown method"
        case .invalidVersion: return "unsupported HTTP version"
        case .invalidChunkSize: return "bad chunk size"
        default: return "\(error)"
        }
    }
}

/// Closes a control connection that gives the helper nothing to do for `timeout`: one that has
/// not sent a whole request (head and body) within it, since it connected or since its last
/// answer, and one whose client has taken none of its answer for it. A connection whose request
/// is being answered (a long list download) is left alone: the client is silent because the
/// helper is working.
///
/// The clock is not reset by bytes arriving, as a read timeout would be: a client sending a header
/// byte every few seconds, or a head announcing a body it never sends, would otherwise hold its
/// connection for good, and with it one of the few each user may open.
final class IdleConnectionCloser: ChannelDuplexHandler, RemovableChannelHandler {
    typealias InboundIn = HTTPServerRequestPart
    typealias InboundOut = HTTPServerRequestPart
    typealias OutboundIn = HTTPServerResponsePart
    typealias OutboundOut = HTTPServerResponsePart

    let timeout: TimeAmount
    /// Whole requests received and not yet answered; a pipelining client may have several.
    private var unanswered = 0
    private var deadline: Scheduled<Void>?

    init(timeout: TimeAmount) {
        self.timeout = timeout
    }

    func handlerAdded(context: ChannelHandlerContext) {
        if context.channel.isActive { update(context: context) }
    }

    func handlerRemoved(context: ChannelHandlerContext) {
        deadline?.cancel()
        deadline = nil
    }

    func channelActive(context: ChannelHandlerContext) {
        update(context: context)
        context.fireChannelActive()
    }

    func channelInactive(context: ChannelHandlerContext) {
        deadline?.cancel()
        deadline = nil
        context.fireChannelInactive()
    }

    func channelRead(context: ChannelHandlerContext, data: NIOAny) {
        if case .end = unwrapInboundIn(data) {
            unanswered += 1
            update(context: context)
        }
        context.fireChannelRead(data)
    }

    func write(context: ChannelHandlerContext, data: NIOAny, promise: EventLoopPromise<Void>?) {
        if case .end = unwrapOutboundIn(data), unanswered > 0 {
            unanswered -= 1
            update(context: context, restart: true)
        }
        context.write(data, promise: promise)
    }

    func channelWritabilityChanged(context: ChannelHandlerContext) {
        update(context: context)
        context.fireChannelWritabilityChanged()
    }

    /// Runs the clock while the helper waits for the client: for a request, or for it to read.
    /// `restart` starts it afresh (an answer was sent: the client gets `timeout` for its next request).
    private func update(context: ChannelHandlerContext, restart: Bool = false) {
        let waitingForClient = unanswered == 0 || !context.channel.isWritable
        if !waitingForClient || restart {
            deadline?.cancel()
            deadline = nil
        }
        guard waitingForClient, deadline == nil, context.channel.isActive else { return }
        let loopBound = NIOLoopBound(context, eventLoop: context.eventLoop)
        deadline = context.eventLoop.scheduleTask(in: timeout) {
            loopBound.value.close(promise: nil)
        }
    }
}
