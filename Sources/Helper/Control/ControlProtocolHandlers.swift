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

/// Closes a connection that has sat idle between requests for the read timeout, so abandoned
/// clients do not hold sockets forever. A connection waiting for its answer (a long list
/// download) is left alone: the client is silent because the helper is working.
final class IdleConnectionCloser: ChannelDuplexHandler, RemovableChannelHandler {
    typealias InboundIn = HTTPServerRequestPart
    typealias InboundOut = HTTPServerRequestPart
    typealias OutboundIn = HTTPServerResponsePart
    typealias OutboundOut = HTTPServerResponsePart

    private var requestInFlight = false

    func channelRead(context: ChannelHandlerContext, data: NIOAny) {
        if case .head = unwrapInboundIn(data) { requestInFlight = true }
        context.fireChannelRead(data)
    }

    func write(context: ChannelHandlerContext, data: NIOAny, promise: EventLoopPromise<Void>?) {
        if case .end = unwrapOutboundIn(data) { requestInFlight = false }
        context.write(data, promise: promise)
    }

    func userInboundEventTriggered(context: ChannelHandlerContext, event: Any) {
        if let idle = event as? IdleStateHandler.IdleStateEvent, idle == .read, !requestInFlight {
            context.close(promise: nil)
            return
        }
        context.fireUserInboundEventTriggered(event)
    }
}
