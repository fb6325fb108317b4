import ControlAPI
import HTTPTypes
import Hummingbird
import NIOCore
import NIOHTTP1
import NIOHTTPTypes

/// Answers a request NIO could not parse (garbage bytes, a bad Content-Length, oversized headers)
/// with a JSON 400 and lets the decoder close the connection; the server keeps serving others.
///
/// It replaces NIO's `HTTPServerProtocolErrorHandler`, whose 400 has an empty body, so that every
/// error of the control API has the same JSON shape. Like that handler it only answers when no
/// other response has started, since a second status line inside a response would corrupt it.
package final class ControlProtocolErrorHandler: ChannelDuplexHandler, RemovableChannelHandler {
    package typealias InboundIn = HTTPRequestPart
    package typealias InboundOut = HTTPRequestPart
    package typealias OutboundIn = HTTPResponsePart
    package typealias OutboundOut = HTTPResponsePart

    package init() {}

    private var responseInFlight = false
    private var requestInFlight = false
    /// The head of the request being read, for what to say when its body cannot be parsed.
    private var requestHead: HTTPRequest?
    /// This handler answered a request the parser gave up on: whatever Hummingbird writes for it
    /// afterwards is dropped, and the connection closes once the answer is out.
    private var answered = false

    package func channelRead(context: ChannelHandlerContext, data: NIOAny) {
        switch unwrapInboundIn(data) {
        case .head(let head):
            requestInFlight = true
            requestHead = head
        case .end: requestInFlight = false
        case .body: break
        }
        context.fireChannelRead(data)
    }

    package func errorCaught(context: ChannelHandlerContext, error: any Error) {
        guard let parserError = error as? HTTPParserError else {
            context.fireErrorCaught(error)
            return
        }
        guard !responseInFlight, !answered else {
            // Mid-answer: a second status line inside an answer would corrupt it. Hummingbird's
            // request loop ends; the connection closes.
            context.fireErrorCaught(error)
            context.close(promise: nil)
            return
        }
        // Between requests, or inside a request's body that cannot be parsed (llhttp refuses a
        // `Transfer-Encoding` that does not end in chunked once the head is through): no answer has
        // started, so this one goes out in the API's JSON shape and the connection closes. Between
        // requests the error goes no further, so Hummingbird's request loop sees the connection end
        // instead of writing its own empty 400 after this one; mid-request the body's reader must
        // see the failure, and what it answers is dropped (`write`).
        let coding = requestInFlight ? requestHead.flatMap { TransferCoding.refusal($0.headerFields) } : nil
        let failure = coding.map {
            ControlFailure(status: $0.status, code: $0.status == .notImplemented ? ControlErrorCode.notImplemented : ControlErrorCode.malformedHTTP,
                           message: $0.message)
        } ?? ControlFailure(
            status: .badRequest, code: ControlErrorCode.malformedHTTP,
            message: "The request is not valid HTTP/1.1 (\(Self.explain(parserError))). Send a request such as "
                + "`curl --unix-socket SOCKET http://localhost/v1/health`."
        )
        let body = ControlJSON.encode(ControlErrorEnvelope(error: failure.error))
        let head = HTTPResponse(status: failure.status, headerFields: [
            .contentType: ControlMediaType.json, .contentLength: "\(body.count)", .connection: "close",
        ])
        let midRequest = requestInFlight
        answered = true
        context.write(wrapOutboundOut(.head(head)), promise: nil)
        context.write(wrapOutboundOut(.body(ByteBuffer(bytes: body))), promise: nil)
        let loopBound = NIOLoopBound(context, eventLoop: context.eventLoop)
        context.writeAndFlush(wrapOutboundOut(.end(nil))).whenComplete { _ in loopBound.value.close(promise: nil) }
        if midRequest { context.fireErrorCaught(error) }
    }

    package func write(context: ChannelHandlerContext, data: NIOAny, promise: EventLoopPromise<Void>?) {
        if answered {
            // The request was answered here already; a second answer would corrupt the stream.
            promise?.succeed()
            return
        }
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
package final class IdleConnectionCloser: ChannelDuplexHandler, RemovableChannelHandler {
    package typealias InboundIn = HTTPRequestPart
    package typealias InboundOut = HTTPRequestPart
    package typealias OutboundIn = HTTPResponsePart
    package typealias OutboundOut = HTTPResponsePart

    let timeout: TimeAmount
    /// Whole requests received and not yet answered; a pipelining client may have several.
    private var unanswered = 0
    private var closeAfterAnswer = false
    private var deadline: Scheduled<Void>?

    package init(timeout: TimeAmount) {
        self.timeout = timeout
    }

    package func handlerAdded(context: ChannelHandlerContext) {
        if context.channel.isActive { update(context: context) }
    }

    package func handlerRemoved(context: ChannelHandlerContext) {
        deadline?.cancel()
        deadline = nil
    }

    package func channelActive(context: ChannelHandlerContext) {
        update(context: context)
        context.fireChannelActive()
    }

    package func channelInactive(context: ChannelHandlerContext) {
        deadline?.cancel()
        deadline = nil
        context.fireChannelInactive()
    }

    package func channelRead(context: ChannelHandlerContext, data: NIOAny) {
        if case .end = unwrapInboundIn(data) {
            unanswered += 1
            update(context: context)
        }
        context.fireChannelRead(data)
    }

    package func write(context: ChannelHandlerContext, data: NIOAny, promise: EventLoopPromise<Void>?) {
        switch unwrapOutboundIn(data) {
        case .head(let head) where head.status.code >= 200:
            closeAfterAnswer = head.headerFields[.connection]?.lowercased() == "close"
        case .end:
            if unanswered > 0 {
                unanswered -= 1
                update(context: context, restart: true)
            }
            if closeAfterAnswer {
                // An answer that says `Connection: close` (a 413) ends the connection once it is out.
                let loopBound = NIOLoopBound(context, eventLoop: context.eventLoop)
                let done = context.eventLoop.makePromise(of: Void.self)
                done.futureResult.whenComplete { _ in loopBound.value.close(promise: nil) }
                promise.map { done.futureResult.cascade(to: $0) }
                context.writeAndFlush(data, promise: done)
                return
            }
        default:
            break
        }
        context.write(data, promise: promise)
    }

    package func channelWritabilityChanged(context: ChannelHandlerContext) {
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
