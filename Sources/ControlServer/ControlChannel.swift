#if canImport(Glibc)
import Glibc
#endif
import ControlAPI
import HTTPTypes
import Hummingbird
import HummingbirdCore
import Logging
import NIOCore
import NIOHTTP1
import NIOHTTPTypes
import ServiceKit
import Sinkhole

/// A connection let in, with who is on it, or one refused (already closed) for being over a limit.
enum ControlAdmission: ServerChildChannelValue {
    case accepted(CallerIdentity, NIOAsyncChannel<HTTPRequestPart, HTTPResponsePart>)
    case refused(any Channel)

    var channel: any Channel {
        switch self {
        case .accepted(_, let wrapped): wrapped.channel
        case .refused(let channel): channel
        }
    }
}

/// Each accepted control connection: who is calling (SO_PEERCRED, once per connection), whether
/// they may hold another connection, then Hummingbird's HTTP/1 pipeline with the control
/// socket's own handlers in it, and Hummingbird's request loop answering through `ControlResponder`.
struct ControlChannel: ServerChildChannel {
    typealias Value = ControlAdmission

    let configuration: ControlServerConfiguration
    let responder: ControlResponder
    let limitLog: ThrottledLog
    let logger: Logger
    private let slots: ConnectionSlots<UInt32>
    /// Root and the helper's own user have slots of their own, outside the total: members of the
    /// group could otherwise fill it together (eight at their share fill the default 64) and lock
    /// the administrator's CLI out of the helper it must repair.
    private let administratorSlots: ConnectionSlots<UInt32>
    private let administrator = geteuid()

    init(configuration: ControlServerConfiguration, responder: ControlResponder, limitLog: ThrottledLog, logger: Logger) {
        self.configuration = configuration
        self.responder = responder
        self.limitLog = limitLog
        self.logger = logger
        slots = ConnectionSlots(limit: configuration.limits.total, perKeyLimit: configuration.limits.perUser)
        administratorSlots = ConnectionSlots(limit: configuration.limits.administratorShare, perKeyLimit: configuration.limits.perUser)
    }

    private var http: HTTP1Channel.Configuration {
        let idleTimeout = configuration.idleTimeout
        var http = HTTP1Channel.Configuration(
            additionalChannelHandlers: [ControlProtocolErrorHandler(), IdleConnectionCloser(timeout: idleTimeout)])
        http.httpDecoder = .init(maxHeaderFieldSize: configuration.maxHeaderBytes, maxHeaderListSize: configuration.maxHeaderBytes)
        return http
    }

    func setup(channel: any Channel, logger: Logger) -> EventLoopFuture<ControlAdmission> {
        PeerCredentials.read(from: channel).flatMap { caller -> EventLoopFuture<ControlAdmission> in
            let callerSlots = caller.uid == 0 || caller.uid == administrator ? administratorSlots : slots
            if let refusal = callerSlots.acquire(caller.uid) {
                let (key, message): (String, Logger.Message) = switch refusal {
                case .total(let limit):
                    ("control-total", "refusing control connections: all \(limit) are open (helper.control_connections)")
                case .perKey(let limit):
                    ("control-user-\(caller.uid)",
                     "refusing control connections of uid \(caller.uid): it holds \(limit) already (helper.control_connections_per_user)")
                }
                limitLog.warning(key, message, metadata: ["client.uid": "\(caller.uid)", "client.pid": "\(caller.pid)"])
                channel.close(promise: nil)
                return channel.eventLoop.makeSucceededFuture(.refused(channel))
            }
            channel.closeFuture.whenComplete { _ in callerSlots.release(caller.uid) }
            // The responder is per connection (below); this one only builds the pipeline.
            return HTTP1Channel(responder: { _, _, _ in }, configuration: http)
                .setup(channel: channel, logger: logger)
                .map { .accepted(caller, $0) }
        }
    }

    func handle(value: ControlAdmission, logger: Logger) async {
        guard case .accepted(let caller, let wrapped) = value else { return }
        let responder = responder
        await HTTP1Channel(
            responder: { request, writer, _ in try await responder.respond(to: request, writer: writer, caller: caller) },
            configuration: http
        ).handle(value: wrapped, logger: logger)
    }
}

/// Answers one request: enforces the body limit, collects the body, routes it with the caller in
/// the context, and writes the answer. Every refusal has the JSON shape of `ControlFailure`.
struct ControlResponder: Sendable {
    let routes: RouterResponder<ControlRequestContext>
    let maxBodyBytes: Int
    let logger: Logger

    func respond(to request: Request, writer: consuming ResponseWriter, caller: CallerIdentity) async throws {
        var response = await answer(request, writer: writer, caller: caller)
        response.headers[.server] = "scrolloff-dns"
        try await writer.write(response: response.head, body: response.body)
    }

    private func answer(_ request: Request, writer: borrowing ResponseWriter, caller: CallerIdentity) async -> Response {
        var request = request
        if let declared = request.headers[.contentLength].flatMap(Int.init), declared > maxBodyBytes {
            return tooLarge()
        }
        if let refusal = TransferCoding.refusal(request.headers) {
            // Before the body: where it ends cannot be known (RFC 9112 §6), so the connection closes.
            var response = ControlResponse.failure(ControlFailure(
                status: refusal.status, code: refusal.status == .notImplemented ? ControlErrorCode.notImplemented : ControlErrorCode.malformedHTTP,
                message: refusal.message)).response
            response.headers[.connection] = "close"
            return response
        }
        do {
            if request.headers[.expect]?.lowercased() == "100-continue" {
                // curl waits for this before sending bodies over 1 KiB (RFC 9110 §10.1.1).
                try await writer.writeInformationalHead(HTTPResponse(status: .continue))
            }
            let body = try await request.collectBody(upTo: maxBodyBytes)
            let context = ControlRequestContext(source: ControlRequestSource(logger: logger, caller: caller, body: Array(body.readableBytesView)))
            return try await routes.respond(to: request, context: context)
        } catch is NIOTooManyBytesError {
            return tooLarge()
        } catch is HTTPParserError {
            // The body could not be parsed: `ControlProtocolErrorHandler` has answered it with a
            // 400 already and drops this one; it is the client's error, not the helper's.
            return ControlResponse.failure(ControlFailure(
                status: .badRequest, code: ControlErrorCode.malformedHTTP, message: "The request's body is not valid HTTP/1.1.")).response
        } catch let failure as ControlFailure {
            return ControlResponse.failure(failure).response
        } catch {
            logger.error("control request failed", metadata: ["http.path": "\(request.uri.path)", "error": "\(error)"])
            return ControlResponse.failure(.internalError("\(error)")).response
        }
    }

    /// 413, and the connection closes after it (`IdleConnectionCloser`), because the rest of an
    /// oversized body would otherwise be read as the next request.
    private func tooLarge() -> Response {
        var response = ControlResponse.failure(.payloadTooLarge(limit: maxBodyBytes)).response
        response.headers[.connection] = "close"
        return response
    }
}
