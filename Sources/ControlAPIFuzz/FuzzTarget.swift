// libFuzzer entry point for the control API's decoding: the bytes of a request body go
// through the decoder of an endpoint of the route table, exactly as the helper decodes it
// (`ControlBodyDecoding`), and the same bytes as text through the query and form parser and every
// parser of a number or time in a path, a query or a page's form. Each must give a value inside
// its range or a typed refusal the helper answers with 400; a trap is the helper going down.
#if canImport(Glibc)
import Glibc
#endif
import ControlAPI
import Foundation
import ScrollOffCore

/// Called by libFuzzer once per input. A broken promise ends in `fatalError`, which libFuzzer
/// records as a crash with the input saved next to it.
@_cdecl("LLVMFuzzerTestOneInput")
public func fuzzerTestOneInput(_ data: UnsafePointer<UInt8>?, _ size: Int) -> CInt {
    guard let data else { return 0 }
    checkControlInput(Array(UnsafeBufferPointer(start: data, count: size)))
    return 0
}

/// Every endpoint of the route table that takes a body, so a new endpoint is fuzzed without
/// touching this file.
func bodies() -> [(name: String, type: any ControlRequestBody.Type)] {
    ControlEndpoints.endpoints.compactMap { endpoint in
        endpoint.bodyType.map { ("\(endpoint.method.rawValue) \(endpoint.template)", $0) }
    }
}

/// The first octet picks the endpoint whose body decoder gets the rest (libFuzzer's mutations
/// keep a choice that reached new code); the rest, as text, also goes through every query, path
/// and form parser, which are cheap.
func checkControlInput(_ input: [UInt8]) {
    guard let first = input.first else { return }
    let rest = Array(input.dropFirst())
    let all = bodies()
    let body = all[Int(first) % all.count]
    checkBody(body.type, rest, endpoint: body.name)
    checkText(String(decoding: rest, as: UTF8.self))
}

/// A body decodes to a value whose bounded fields are in range and which encodes to a body that
/// decodes to the same value, or is refused with one of the two 400s.
func checkBody<Body: ControlRequestBody>(_ type: Body.Type, _ bytes: [UInt8], endpoint: String) {
    let decoded: Body
    do throws(ControlBodyError) {
        decoded = try ControlBodyDecoding.decode(type, from: bytes)
    } catch {
        switch error {
        case .malformed(let detail): if detail.isEmpty { fail("\(endpoint): a refusal without words", bytes) }
        case .outOfRange(let range): checkRefusal(range, endpoint: endpoint, bytes)
        }
        return
    }
    checkInRange(decoded, endpoint: endpoint, bytes)
    let encoded = [UInt8](ControlJSON.encode(decoded))
    guard let again = try? ControlBodyDecoding.decode(type, from: encoded) else {
        fail("\(endpoint): the decoded body does not decode again from its own encoding \(String(decoding: encoded, as: UTF8.self))", bytes)
    }
    guard [UInt8](ControlJSON.encode(again)) == encoded else { fail("\(endpoint): the body changed in a round trip", bytes) }
}

/// The numbers, ids and times of queries, paths and forms.
func checkText(_ text: String) {
    let fields = URLEncodedFields.parse(text)
    for value in [text] + fields.keys + fields.values {
        if let since = try? WireTimeQuery.parse(value, field: "since"), !(WireTimeQuery.earliest...WireTimeQuery.latest).contains(since) {
            fail("since outside 1970…9999: \(since)", Array(value.utf8))
        }
        if let id = try? WireID.parse(value, what: "an id", listing: "the list"), id < 1 { fail("id \(id) below 1", Array(value.utf8)) }
        checkMinutes(AdjustmentSeconds.self, value)
        checkMinutes(RequestedSeconds.self, value)
        checkMinutes(SpendLimitSeconds.self, value)
        checkMinutes(FocusSeconds.self, value)
        checkMinutes(PauseSeconds.self, value)
        checkMinutes(AllowanceSeconds.self, value)
        if let digits = Int64(value) {
            checkSeconds(AdjustmentSeconds.self, digits)
            checkSeconds(RequestedSeconds.self, digits)
            checkSeconds(SpendLimitSeconds.self, digits)
            checkSeconds(FocusSeconds.self, digits)
            checkSeconds(PauseSeconds.self, digits)
            checkSeconds(AllowanceSeconds.self, digits)
        }
        // A path parameter is one percent-encoded segment: no `/`, `?` or `#` of its own, and it
        // decodes back to the text.
        let target = ControlEndpoints.archivePlan.target(value)
        let segment = target.split(separator: "/", omittingEmptySubsequences: false)[3]
        if segment.contains(where: { "/?#".contains($0) }) || segment.removingPercentEncoding != value {
            fail("path parameter not kept as one segment: \(target)", Array(value.utf8))
        }
    }
}

func checkMinutes<Bounds: SecondsBounds>(_ type: BoundedSeconds<Bounds>.Type, _ text: String) {
    for negative in [false, true] {
        do throws(WireRangeError) {
            let value = try BoundedSeconds<Bounds>(minutes: text, negative: negative)
            guard Bounds.contains(value.seconds), value.seconds % 60 == 0 else { fail("minutes \(text) gave \(value.seconds) s", Array(text.utf8)) }
        } catch {
            checkRefusal(error, endpoint: "minutes", Array(text.utf8))
        }
    }
}

func checkSeconds<Bounds: SecondsBounds>(_ type: BoundedSeconds<Bounds>.Type, _ seconds: Int64) {
    do throws(WireRangeError) {
        let value = try BoundedSeconds<Bounds>(seconds)
        guard value.seconds == seconds, Bounds.contains(seconds), value.span.milliseconds == seconds * 1000 else {
            fail("\(seconds) s accepted out of range", [])
        }
    } catch {
        guard !Bounds.contains(seconds) else { fail("\(seconds) s refused in range", []) }
        checkRefusal(error, endpoint: "seconds", [])
    }
}

/// A refusal says the range and what was sent, and never echoes more than a few dozen characters.
func checkRefusal(_ error: WireRangeError, endpoint: String, _ input: [UInt8]) {
    guard !error.allowed.isEmpty, !error.sent.isEmpty, error.sent.count <= 200 else {
        fail("\(endpoint): refusal without a range or with a long echo: \(error)", input)
    }
}

/// Bounded values met anywhere in a decoded body (a field, an optional's payload).
protocol BoundedWireValue { var inRange: Bool { get } }
extension BoundedSeconds: BoundedWireValue {
    var inRange: Bool { Bounds.contains(seconds) }
}

func checkInRange(_ value: Any, endpoint: String, _ input: [UInt8], depth: Int = 0) {
    if let bounded = value as? any BoundedWireValue, !bounded.inRange { fail("\(endpoint): \(value) decoded out of range", input) }
    guard depth < 4 else { return }
    for child in Mirror(reflecting: value).children { checkInRange(child.value, endpoint: endpoint, input, depth: depth + 1) }
}

func fail(_ what: String, _ input: [UInt8]) -> Never {
    fatalError("broken promise: \(what); input \(input.prefix(64).map { String(format: "%02x", $0) }.joined())")
}
