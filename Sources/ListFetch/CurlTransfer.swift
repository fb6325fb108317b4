import CCurlShim
import Foundation
import ScrollOffCore

#if canImport(Glibc)
import Glibc
#elseif canImport(Darwin)
import Darwin
#endif

/// A failed attempt, with the server's `Retry-After` hint when it sent one.
struct AttemptFailure: Error, Sendable {
    var error: ListFetchError
    var retryAfter: Span?
}

/// One blocking libcurl transfer into a file. Runs on its own thread (see `ListFetcher`): the easy
/// handle and the callback context are created, used and destroyed there, so they never cross
/// threads and need not be Sendable. libcurl calls the write callback on that same thread, inside
/// curl_easy_perform; for a refresh it runs under SCHED_IDLE (`DedicatedThread`).
enum CurlTransfer {
    struct Request: Sendable {
        var url: String
        var conditional: ConditionalValidators?
        var destinationPath: String
        var policy: FetchPolicy
        var attempt: Int
        var cancel: CancelFlag
        var progress: ProgressHandler?
        /// What the source's adder may read and reach.
        var access: SourceAccess = .administrator
    }

    static func perform(_ request: Request) -> Result<FetchResult, AttemptFailure> {
        let initCode = scrolloff_curl_global_init_once()
        guard initCode == CURLE_OK else {
            return .failure(AttemptFailure(error: .curlUnavailable(detail: "curl_global_init: \(describe(initCode))")))
        }
        // O_TRUNC: a retry starts from an empty file, never appends to a failed attempt's bytes.
        // Those bytes (up to the size cap) are dropped in steps first, not in the one open call.
        StepwiseIO.shrink(request.destinationPath)
        let fd = open(request.destinationPath, O_WRONLY | O_CREAT | O_TRUNC | O_CLOEXEC, 0o600)
        guard fd >= 0 else {
            return .failure(AttemptFailure(error: .localFile(path: request.destinationPath, operation: "open for writing", errno: lastErrno())))
        }
        defer { close(fd) }
        guard let handle = curl_easy_init() else {
            return .failure(AttemptFailure(error: .curlUnavailable(detail: "curl_easy_init returned no handle")))
        }
        defer { curl_easy_cleanup(handle) }

        let context = TransferContext(
            fileDescriptor: fd,
            maxBytes: request.policy.maxBytes,
            cancel: request.cancel,
            progress: ProgressThrottle(handler: request.progress, attempt: request.attempt, interval: request.policy.progressInterval)
        )
        if ListSourceURL(request.url)?.scheme == "file" {
            return readFile(request, context: context, fd: fd)
        }
        if request.access.reader != nil { context.addressRule = AddressRule(allowed: request.access.allowedPrivate) }
        let errorBuffer = UnsafeMutablePointer<CChar>.allocate(capacity: Int(CURL_ERROR_SIZE))
        errorBuffer.initialize(repeating: 0, count: Int(CURL_ERROR_SIZE))
        defer { errorBuffer.deallocate() }

        var headerList: UnsafeMutablePointer<curl_slist>? = nil
        defer { curl_slist_free_all(headerList) }
        if let conditional = request.conditional {
            // RFC 9110 §13.1.3: a server that understands If-None-Match ignores If-Modified-Since,
            // so sending both is safe and helps servers that only keep dates.
            // Checked again here because the values come back from a metadata file on disk; a CR
            // or LF in them would inject headers.
            if let etag = conditional.etag, CapturedHeaders.isSafeValue(etag) {
                headerList = curl_slist_append(headerList, "If-None-Match: \(etag)")
            }
            if let date = conditional.lastModified, CapturedHeaders.isSafeValue(date) {
                headerList = curl_slist_append(headerList, "If-Modified-Since: \(date)")
            }
        }

        var optionFailure: OptionFailure?
        let code: CURLcode = withExtendedLifetime(context) {
            let opaque = Unmanaged.passUnretained(context).toOpaque()
            do throws(OptionFailure) {
                try configure(handle, request: request, context: opaque, errorBuffer: errorBuffer, headers: headerList)
            } catch {
                optionFailure = error
                return CURLE_FAILED_INIT
            }
            return curl_easy_perform(handle)
        }
        if let optionFailure {
            return .failure(AttemptFailure(error: .curlUnavailable(
                detail: "libcurl \(curlVersion()) refused \(optionFailure.option): \(describe(optionFailure.code))")))
        }
        let info = TransferInfo(handle: handle)
        context.progress.finish(received: info.downloadedBytes, expected: info.contentLength)

        guard code == CURLE_OK else {
            let detail = String(cString: errorBuffer).trimmingSpaces()
            let error = classify(code, request: request, context: context, info: info,
                                 detail: detail.isEmpty ? describe(code) : detail)
            let retryAfter = context.headers.retryAfterSeconds.map { Span.seconds($0) }
            return .failure(AttemptFailure(error: error, retryAfter: retryAfter))
        }

        let isHTTP = info.responseCode != 0
        let kind: FetchResult.Kind
        if isHTTP, info.responseCode == 304 {
            guard let conditional = request.conditional, !conditional.isEmpty else {
                return .failure(AttemptFailure(error: .httpStatus(url: request.url, status: 304)))
            }
            kind = .notModified
        } else if isHTTP, !(200...299).contains(info.responseCode) {
            // FAILONERROR covers >= 400; this catches a final 1xx/3xx (a redirect without Location).
            return .failure(AttemptFailure(error: .httpStatus(url: request.url, status: info.responseCode)))
        } else {
            kind = .downloaded
        }
        // The store renames this file into place; it must be on disk before the rename is. The
        // write callback started the writeback step by step (`StepwiseIO.Writeback`), so this
        // fsync writes at most the last steps and commits the journal: durability is unchanged.
        if kind == .downloaded, fsync(fd) != 0 {
            return .failure(AttemptFailure(error: .localFile(path: request.destinationPath, operation: "flush", errno: lastErrno())))
        }
        var validators = ConditionalValidators(etag: context.headers.etag, lastModified: context.headers.lastModified)
        if kind == .notModified, validators.isEmpty, let conditional = request.conditional {
            // A 304 may omit the validators; the stored ones then still describe the copy.
            validators = conditional
        }
        return .success(FetchResult(
            kind: kind,
            bytesWritten: kind == .downloaded ? context.bytesWritten : 0,
            validators: validators,
            httpStatus: isHTTP ? info.responseCode : nil,
            effectiveURL: info.effectiveURL ?? request.url,
            redirectCount: info.redirectCount,
            attempts: request.attempt,
            retriedErrors: []
        ))
    }

    /// A file:// source, read by `FileSource` (no symbolic links, the adder's rights), not by libcurl.
    private static func readFile(_ request: Request, context: TransferContext, fd: Int32) -> Result<FetchResult, AttemptFailure> {
        let path = ListSourceURL(request.url)?.path ?? filePath(of: request.url)
        let failure = FileSource.copy(url: request.url, path: path, access: request.access, context: context)
        context.progress.finish(received: context.bytesWritten, expected: context.bytesWritten)
        if let failure { return .failure(AttemptFailure(error: failure)) }
        if fsync(fd) != 0 {
            return .failure(AttemptFailure(error: .localFile(path: request.destinationPath, operation: "flush", errno: lastErrno())))
        }
        return .success(FetchResult(
            kind: .downloaded, bytesWritten: context.bytesWritten, validators: ConditionalValidators(), httpStatus: nil,
            effectiveURL: request.url, redirectCount: 0, attempts: request.attempt, retriedErrors: []))
    }

    /// Every option of the transfer, each checked: an old libcurl lacking one (say
    /// CURLOPT_PROTOCOLS_STR, 7.85) must fail loudly rather than run without the restriction.
    private static func configure(
        _ h: UnsafeMutableRawPointer,
        request: Request,
        context: UnsafeMutableRawPointer,
        errorBuffer: UnsafeMutablePointer<CChar>,
        headers: UnsafeMutablePointer<curl_slist>?
    ) throws(OptionFailure) {
        let p = request.policy
        try check(scrolloff_curl_setopt_pointer(h, CURLOPT_ERRORBUFFER, errorBuffer), "CURLOPT_ERRORBUFFER")
        try check(scrolloff_curl_setopt_string(h, CURLOPT_URL, request.url), "CURLOPT_URL")
        // Timeouts must not use signals in a multi-threaded process (libcurl docs, CURLOPT_NOSIGNAL).
        try check(scrolloff_curl_setopt_long(h, CURLOPT_NOSIGNAL, 1), "CURLOPT_NOSIGNAL")
        // file:// is read by `FileSource`, never by libcurl (which follows symbolic links).
        try check(scrolloff_curl_setopt_string(h, CURLOPT_PROTOCOLS_STR, "http,https"), "CURLOPT_PROTOCOLS_STR")
        // A redirect must never reach file:// (it would read local files at the server's request).
        try check(scrolloff_curl_setopt_string(h, CURLOPT_REDIR_PROTOCOLS_STR, "http,https"), "CURLOPT_REDIR_PROTOCOLS_STR")
        try check(scrolloff_curl_setopt_long(h, CURLOPT_FOLLOWLOCATION, 1), "CURLOPT_FOLLOWLOCATION")
        try check(scrolloff_curl_setopt_long(h, CURLOPT_MAXREDIRS, p.maxRedirects), "CURLOPT_MAXREDIRS")
        // "" offers every encoding this libcurl decodes (gzip, deflate, …) and decodes transparently.
        try check(scrolloff_curl_setopt_string(h, CURLOPT_ACCEPT_ENCODING, ""), "CURLOPT_ACCEPT_ENCODING")
        try check(scrolloff_curl_setopt_long(h, CURLOPT_CONNECTTIMEOUT_MS, clampedLong(p.connectTimeout.milliseconds)), "CURLOPT_CONNECTTIMEOUT_MS")
        try check(scrolloff_curl_setopt_long(h, CURLOPT_TIMEOUT_MS, clampedLong(p.totalTimeout.milliseconds)), "CURLOPT_TIMEOUT_MS")
        try check(scrolloff_curl_setopt_long(h, CURLOPT_LOW_SPEED_LIMIT, p.lowSpeedBytesPerSecond), "CURLOPT_LOW_SPEED_LIMIT")
        try check(scrolloff_curl_setopt_long(h, CURLOPT_LOW_SPEED_TIME, clampedLong(stallSeconds(p))), "CURLOPT_LOW_SPEED_TIME")
        try check(scrolloff_curl_setopt_off_t(h, CURLOPT_MAXFILESIZE_LARGE, curl_off_t(clamping: p.maxBytes)), "CURLOPT_MAXFILESIZE_LARGE")
        try check(scrolloff_curl_setopt_string(h, CURLOPT_USERAGENT, p.userAgent), "CURLOPT_USERAGENT")
        // 4xx/5xx end the transfer as CURLE_HTTP_RETURNED_ERROR, so an error page never reaches disk.
        try check(scrolloff_curl_setopt_long(h, CURLOPT_FAILONERROR, 1), "CURLOPT_FAILONERROR")
        if let headers {
            try check(scrolloff_curl_setopt_pointer(h, CURLOPT_HTTPHEADER, UnsafeMutableRawPointer(headers)), "CURLOPT_HTTPHEADER")
        }
        try check(scrolloff_curl_setopt_data_callback(h, CURLOPT_WRITEFUNCTION, { data, size, count, context in
            guard let data, let context else { return 0 }
            let transfer = Unmanaged<TransferContext>.fromOpaque(context).takeUnretainedValue()
            let (length, overflow) = size.multipliedReportingOverflow(by: count)
            guard !overflow else { return 0 }
            return transfer.write(UnsafeRawBufferPointer(start: data, count: length))
        }), "CURLOPT_WRITEFUNCTION")
        try check(scrolloff_curl_setopt_pointer(h, CURLOPT_WRITEDATA, context), "CURLOPT_WRITEDATA")
        try check(scrolloff_curl_setopt_data_callback(h, CURLOPT_HEADERFUNCTION, { data, size, count, context in
            let (length, overflow) = size.multipliedReportingOverflow(by: count)
            guard let data, let context, !overflow else { return 0 }
            let transfer = Unmanaged<TransferContext>.fromOpaque(context).takeUnretainedValue()
            let bytes = UnsafeRawBufferPointer(start: data, count: length)
            transfer.headers.consume(line: String(decoding: bytes, as: UTF8.self))
            return length
        }), "CURLOPT_HEADERFUNCTION")
        try check(scrolloff_curl_setopt_pointer(h, CURLOPT_HEADERDATA, context), "CURLOPT_HEADERDATA")
        // libcurl calls this at least once a second even when no data flows, so cancelling a
        // stalled transfer takes effect within a second.
        try check(scrolloff_curl_setopt_xferinfo_callback(h, { context, downloadTotal, downloadNow, _, _ in
            guard let context else { return 0 }
            let transfer = Unmanaged<TransferContext>.fromOpaque(context).takeUnretainedValue()
            if transfer.cancel.isCancelled { return 1 }
            transfer.progress.offer(received: Int64(downloadNow), expected: Int64(downloadTotal))
            return 0
        }), "CURLOPT_XFERINFOFUNCTION")
        try check(scrolloff_curl_setopt_pointer(h, CURLOPT_XFERINFODATA, context), "CURLOPT_XFERINFODATA")
        let transfer = Unmanaged<TransferContext>.fromOpaque(context).takeUnretainedValue()
        guard transfer.addressRule != nil else { return }
        // A member's source: every socket libcurl opens, for the first hop and each redirect, is
        // checked on the address it connects to (`AddressRule`). No proxy: through one, the
        // address checked would be the proxy's, not the server's.
        try check(scrolloff_curl_setopt_string(h, CURLOPT_PROXY, ""), "CURLOPT_PROXY")
        try check(scrolloff_curl_setopt_opensocket_callback(h, { context, _, address in
            guard let context, let address else { return CURL_SOCKET_BAD }
            let transfer = Unmanaged<TransferContext>.fromOpaque(context).takeUnretainedValue()
            guard let rule = transfer.addressRule else { return CURL_SOCKET_BAD }
            let raw = UnsafeRawPointer(address) + MemoryLayout<curl_sockaddr>.offset(of: \curl_sockaddr.addr)!
            guard let bytes = AddressRule.bytes(of: raw) else {
                transfer.refusedAddress = ("an address of family \(address.pointee.family)", "not an IP address")
                return CURL_SOCKET_BAD
            }
            if let kind = rule.refusal(of: bytes) {
                transfer.refusedAddress = (IPAddressBytes.text(bytes), kind)
                return CURL_SOCKET_BAD
            }
            return socket(address.pointee.family, address.pointee.socktype | Int32(SOCK_CLOEXEC.rawValue), address.pointee.`protocol`)
        }, context), "CURLOPT_OPENSOCKETFUNCTION")
    }

    struct OptionFailure: Error {
        var option: String
        var code: CURLcode
    }

    private static func check(_ code: CURLcode, _ option: String) throws(OptionFailure) {
        guard code == CURLE_OK else { throw OptionFailure(option: option, code: code) }
    }

    static func curlVersion() -> String {
        guard let text = curl_version() else { return "(unknown version)" }
        return String(cString: text)
    }

    private static func stallSeconds(_ policy: FetchPolicy) -> Int64 {
        max(1, (policy.stallTimeout.milliseconds + 999) / 1000)
    }

    private static func clampedLong(_ value: Int64) -> Int {
        Int(clamping: max(0, value))
    }

    static func describe(_ code: CURLcode) -> String {
        guard let text = curl_easy_strerror(code) else { return "code \(code.rawValue)" }
        return String(cString: text)
    }

    /// Maps libcurl's result to the error the user can act on.
    private static func classify(
        _ code: CURLcode, request: Request, context: TransferContext, info: TransferInfo, detail: String
    ) -> ListFetchError {
        let url = request.url
        switch code {
        case CURLE_ABORTED_BY_CALLBACK:
            return .cancelled(url: url)
        case CURLE_WRITE_ERROR where request.cancel.isCancelled:
            return .cancelled(url: url)
        case CURLE_WRITE_ERROR where context.capExceeded, CURLE_FILESIZE_EXCEEDED:
            return .tooLarge(url: url, limitBytes: request.policy.maxBytes)
        case CURLE_WRITE_ERROR:
            return .localFile(path: request.destinationPath, operation: "write", errno: context.writeErrno)
        case CURLE_HTTP_RETURNED_ERROR:
            return .httpStatus(url: url, status: info.responseCode)
        case CURLE_OPERATION_TIMEDOUT:
            // Both limits report the same code; the timings tell them apart.
            if info.connectMicroseconds == 0, info.responseCode == 0 {
                return .timedOut(url: url, phase: .connect, limit: request.policy.connectTimeout)
            }
            if info.totalMicroseconds / 1000 >= request.policy.totalTimeout.milliseconds - 50 {
                return .timedOut(url: url, phase: .total, limit: request.policy.totalTimeout)
            }
            return .timedOut(url: url, phase: .stalled, limit: .seconds(stallSeconds(request.policy)))
        case CURLE_PARTIAL_FILE:
            return .truncated(url: url, receivedBytes: context.bytesWritten)
        case CURLE_TOO_MANY_REDIRECTS:
            return .tooManyRedirects(url: url, limit: request.policy.maxRedirects)
        case CURLE_UNSUPPORTED_PROTOCOL:
            if info.redirectCount > 0 || info.redirectURL != nil {
                return .redirectRefused(url: url, detail: info.redirectURL ?? detail)
            }
            return .unsupportedURL(url: url)
        case CURLE_URL_MALFORMAT:
            return .unsupportedURL(url: url)
        case CURLE_COULDNT_RESOLVE_HOST, CURLE_COULDNT_RESOLVE_PROXY:
            return .hostNotFound(url: url, host: ListSourceURL(url)?.host ?? url)
        case CURLE_COULDNT_CONNECT where context.refusedAddress != nil:
            let refused = context.refusedAddress!
            return .addressRefused(url: url, address: refused.address, kind: refused.kind)
        case CURLE_COULDNT_CONNECT, CURLE_GOT_NOTHING, CURLE_RECV_ERROR, CURLE_SEND_ERROR, CURLE_SSL_CONNECT_ERROR:
            return .connectionFailed(url: url, detail: detail)
        case CURLE_FILE_COULDNT_READ_FILE:
            return .fileNotFound(path: filePath(of: url))
        case CURLE_PEER_FAILED_VERIFICATION, CURLE_SSL_CACERT_BADFILE, CURLE_SSL_CERTPROBLEM, CURLE_SSL_CIPHER,
             CURLE_SSL_ISSUER_ERROR, CURLE_SSL_PINNEDPUBKEYNOTMATCH:
            return .tls(url: url, detail: detail)
        case CURLE_BAD_CONTENT_ENCODING:
            return .badContentEncoding(url: url, detail: detail)
        default:
            return .transfer(url: url, curlCode: Int(code.rawValue), detail: detail)
        }
    }

    static func filePath(of url: String) -> String {
        guard let start = url.range(of: "://")?.upperBound else { return url }
        let rest = url[start...]
        // file://localhost/path and file:///path both name /path.
        guard let slash = rest.firstIndex(of: "/") else { return String(rest) }
        return String(rest[slash...]).removingPercentEncoding ?? String(rest[slash...])
    }
}

/// What libcurl reports about a finished transfer.
struct TransferInfo {
    var responseCode: Int = 0
    var effectiveURL: String?
    var redirectURL: String?
    var redirectCount: Int = 0
    var connectMicroseconds: Int64 = 0
    var totalMicroseconds: Int64 = 0
    var downloadedBytes: Int64 = 0
    var contentLength: Int64 = -1

    init(handle: UnsafeMutableRawPointer) {
        var long = 0
        if scrolloff_curl_getinfo_long(handle, CURLINFO_RESPONSE_CODE, &long) == CURLE_OK { responseCode = long }
        if scrolloff_curl_getinfo_long(handle, CURLINFO_REDIRECT_COUNT, &long) == CURLE_OK { redirectCount = long }
        var string: UnsafePointer<CChar>? = nil
        if scrolloff_curl_getinfo_string(handle, CURLINFO_EFFECTIVE_URL, &string) == CURLE_OK, let string {
            effectiveURL = String(cString: string)
        }
        string = nil
        if scrolloff_curl_getinfo_string(handle, CURLINFO_REDIRECT_URL, &string) == CURLE_OK, let string {
            redirectURL = String(cString: string)
        }
        var offset: curl_off_t = 0
        if scrolloff_curl_getinfo_off_t(handle, CURLINFO_CONNECT_TIME_T, &offset) == CURLE_OK { connectMicroseconds = Int64(offset) }
        if scrolloff_curl_getinfo_off_t(handle, CURLINFO_TOTAL_TIME_T, &offset) == CURLE_OK { totalMicroseconds = Int64(offset) }
        if scrolloff_curl_getinfo_off_t(handle, CURLINFO_SIZE_DOWNLOAD_T, &offset) == CURLE_OK { downloadedBytes = Int64(offset) }
        if scrolloff_curl_getinfo_off_t(handle, CURLINFO_CONTENT_LENGTH_DOWNLOAD_T, &offset) == CURLE_OK { contentLength = Int64(offset) }
    }
}
