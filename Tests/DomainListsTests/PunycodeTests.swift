import Testing
@testable import DomainLists

/// RFC 3492 §7.1 sample strings: code points and their Punycode. The RFC marks some characters
/// with mixed-case annotations (uppercase in the Punycode); this encoder emits lowercase digits,
/// as RFC 3492 Appendix A allows, so encodings are compared without case.
struct PunycodeTests {
    struct Sample: CustomTestStringConvertible, Sendable {
        var name: String
        var codePoints: [UInt32]
        var punycode: String
        var testDescription: String { name }
    }

    static let samples: [Sample] = [
        Sample(name: "(A) Arabic (Egyptian)", codePoints: [0x0644, 0x064A, 0x0647, 0x0645, 0x0627, 0x0628, 0x062A, 0x0643, 0x0644, 0x0645, 0x0648, 0x0634, 0x0639, 0x0631, 0x0628, 0x064A, 0x061F], punycode: "egbpdaj6bu4bxfgehfvwxn"),
        Sample(name: "(B) Chinese (simplified)", codePoints: [0x4ED6, 0x4EEC, 0x4E3A, 0x4EC0, 0x4E48, 0x4E0D, 0x8BF4, 0x4E2D, 0x6587], punycode: "ihqwcrb4cv8a8dqg056pqjye"),
        Sample(name: "(C) Chinese (traditional)", codePoints: [0x4ED6, 0x5011, 0x7232, 0x4EC0, 0x9EBD, 0x4E0D, 0x8AAA, 0x4E2D, 0x6587], punycode: "ihqwctvzc91f659drss3x8bo0yb"),
        Sample(name: "(D) Czech", codePoints: [0x0050, 0x0072, 0x006F, 0x010D, 0x0070, 0x0072, 0x006F, 0x0073, 0x0074, 0x011B, 0x006E, 0x0065, 0x006D, 0x006C, 0x0075, 0x0076, 0x00ED, 0x010D, 0x0065, 0x0073, 0x006B, 0x0079], punycode: "Proprostnemluvesky-uyb24dma41a"),
        Sample(name: "(E) Hebrew", codePoints: [0x05DC, 0x05DE, 0x05D4, 0x05D4, 0x05DD, 0x05E4, 0x05E9, 0x05D5, 0x05D8, 0x05DC, 0x05D0, 0x05DE, 0x05D3, 0x05D1, 0x05E8, 0x05D9, 0x05DD, 0x05E2, 0x05D1, 0x05E8, 0x05D9, 0x05EA], punycode: "4dbcagdahymbxekheh6e0a7fei0b"),
        Sample(name: "(F) Hindi (Devanagari)", codePoints: [0x092F, 0x0939, 0x0932, 0x094B, 0x0917, 0x0939, 0x093F, 0x0928, 0x094D, 0x0926, 0x0940, 0x0915, 0x094D, 0x092F, 0x094B, 0x0902, 0x0928, 0x0939, 0x0940, 0x0902, 0x092C, 0x094B, 0x0932, 0x0938, 0x0915, 0x0924, 0x0947, 0x0939, 0x0948, 0x0902], punycode: "i1baa7eci9glrd9b2ae1bj0hfcgg6iyaf8o0a1dig0cd"),
        Sample(name: "(G) Japanese (kanji and hiragana)", codePoints: [0x306A, 0x305C, 0x307F, 0x3093, 0x306A, 0x65E5, 0x672C, 0x8A9E, 0x3092, 0x8A71, 0x3057, 0x3066, 0x304F, 0x308C, 0x306A, 0x3044, 0x306E, 0x304B], punycode: "n8jok5ay5dzabd5bym9f0cm5685rrjetr6pdxa"),
        Sample(name: "(H) Korean (Hangul syllables)", codePoints: [0xC138, 0xACC4, 0xC758, 0xBAA8, 0xB4E0, 0xC0AC, 0xB78C, 0xB4E4, 0xC774, 0xD55C, 0xAD6D, 0xC5B4, 0xB97C, 0xC774, 0xD574, 0xD55C, 0xB2E4, 0xBA74, 0xC5BC, 0xB9C8, 0xB098, 0xC88B, 0xC744, 0xAE4C], punycode: "989aomsvi5e83db1d2a355cv1e0vak1dwrv93d5xbh15a0dt30a5jpsd879ccm6fea98c"),
        Sample(name: "(I) Russian (Cyrillic)", codePoints: [0x043F, 0x043E, 0x0447, 0x0435, 0x043C, 0x0443, 0x0436, 0x0435, 0x043E, 0x043D, 0x0438, 0x043D, 0x0435, 0x0433, 0x043E, 0x0432, 0x043E, 0x0440, 0x044F, 0x0442, 0x043F, 0x043E, 0x0440, 0x0443, 0x0441, 0x0441, 0x043A, 0x0438], punycode: "b1abfaaepdrnnbgefbaDotcwatmq2g4l"),
        Sample(name: "(J) Spanish", codePoints: [0x0050, 0x006F, 0x0072, 0x0071, 0x0075, 0x00E9, 0x006E, 0x006F, 0x0070, 0x0075, 0x0065, 0x0064, 0x0065, 0x006E, 0x0073, 0x0069, 0x006D, 0x0070, 0x006C, 0x0065, 0x006D, 0x0065, 0x006E, 0x0074, 0x0065, 0x0068, 0x0061, 0x0062, 0x006C, 0x0061, 0x0072, 0x0065, 0x006E, 0x0045, 0x0073, 0x0070, 0x0061, 0x00F1, 0x006F, 0x006C], punycode: "PorqunopuedensimplementehablarenEspaol-fmd56a"),
        Sample(name: "(K) Vietnamese", codePoints: [0x0054, 0x1EA1, 0x0069, 0x0073, 0x0061, 0x006F, 0x0068, 0x1ECD, 0x006B, 0x0068, 0x00F4, 0x006E, 0x0067, 0x0074, 0x0068, 0x1EC3, 0x0063, 0x0068, 0x1EC9, 0x006E, 0x00F3, 0x0069, 0x0074, 0x0069, 0x1EBF, 0x006E, 0x0067, 0x0056, 0x0069, 0x1EC7, 0x0074], punycode: "TisaohkhngthchnitingVit-kjcr8268qyxafd2f1b9g"),
        Sample(name: "(L) 3<nen>B<gumi><kinpachi><sensei>", codePoints: [0x0033, 0x5E74, 0x0042, 0x7D44, 0x91D1, 0x516B, 0x5148, 0x751F], punycode: "3B-ww4c5e180e575a65lsy2b"),
        Sample(name: "(M) <amuro><namie>-with-SUPER-MONKEYS", codePoints: [0x5B89, 0x5BA4, 0x5948, 0x7F8E, 0x6075, 0x002D, 0x0077, 0x0069, 0x0074, 0x0068, 0x002D, 0x0053, 0x0055, 0x0050, 0x0045, 0x0052, 0x002D, 0x004D, 0x004F, 0x004E, 0x004B, 0x0045, 0x0059, 0x0053], punycode: "-with-SUPER-MONKEYS-pc58ag80a8qai00g7n9n"),
        Sample(name: "(N) Hello-Another-Way-<sorezore><no><basho>", codePoints: [0x0048, 0x0065, 0x006C, 0x006C, 0x006F, 0x002D, 0x0041, 0x006E, 0x006F, 0x0074, 0x0068, 0x0065, 0x0072, 0x002D, 0x0057, 0x0061, 0x0079, 0x002D, 0x305D, 0x308C, 0x305E, 0x308C, 0x306E, 0x5834, 0x6240], punycode: "Hello-Another-Way--fc4qua05auwb3674vfr0b"),
        Sample(name: "(O) <hitotsu><yane><no><shita>2", codePoints: [0x3072, 0x3068, 0x3064, 0x5C4B, 0x6839, 0x306E, 0x4E0B, 0x0032], punycode: "2-u9tlzr9756bt3uc0v"),
        Sample(name: "(P) Maji<de>Koi<suru>5<byou><mae>", codePoints: [0x004D, 0x0061, 0x006A, 0x0069, 0x3067, 0x004B, 0x006F, 0x0069, 0x3059, 0x308B, 0x0035, 0x79D2, 0x524D], punycode: "MajiKoi5-783gue6qz075azm5e"),
        Sample(name: "(Q) <pafii>de<runba>", codePoints: [0x30D1, 0x30D5, 0x30A3, 0x30FC, 0x0064, 0x0065, 0x30EB, 0x30F3, 0x30D0], punycode: "de-jg4avhby1noc0d"),
        Sample(name: "(R) <sono><supiido><de>", codePoints: [0x305D, 0x306E, 0x30B9, 0x30D4, 0x30FC, 0x30C9, 0x3067], punycode: "d9juau41awczczp"),
        Sample(name: "(S) -> $1.00 <-", codePoints: [0x002D, 0x003E, 0x0020, 0x0024, 0x0031, 0x002E, 0x0030, 0x0030, 0x0020, 0x003C, 0x002D], punycode: "-> $1.00 <--"),
    ]

    @Test("RFC 3492 §7.1 sample encodes", arguments: samples)
    func rfc3492_sample_encodes(_ sample: Sample) throws {
        let scalars = sample.codePoints.compactMap(Unicode.Scalar.init)
        #expect(try Punycode.encode(scalars).lowercased() == sample.punycode.lowercased())
    }

    @Test("RFC 3492 §7.1 sample decodes", arguments: samples)
    func rfc3492_sample_decodes(_ sample: Sample) throws {
        #expect(try Punycode.decode(sample.punycode).map(\.value) == sample.codePoints)
    }

    @Test func decoding_rejects_a_character_that_is_not_a_digit() {
        #expect(throws: Punycode.Failure.invalidCharacter(UInt8(ascii: "!"))) { try Punycode.decode("abc-d!e") }
    }

    @Test func decoding_rejects_digits_that_stop_mid_number() {
        // "z" (25) is at or above every threshold, so it always asks for another digit.
        #expect(throws: Punycode.Failure.truncated) { try Punycode.decode("zz") }
    }

    @Test func decoding_rejects_values_past_32_bits() {
        #expect(throws: Punycode.Failure.overflow) { try Punycode.decode("99999999999999999") }
    }

    @Test func decoding_rejects_a_value_past_the_last_code_point() {
        // Large but within 32 bits: decodes to a value above U+10FFFF.
        #expect(throws: (any Error).self) { try Punycode.decode("999999999") }
    }

    @Test func round_trip_of_names_seen_in_lists() throws {
        for text in ["bücher", "münchen-klicks", "παράδειγμα", "пример", "例え", "ß-straße"] {
            let scalars = Array(text.unicodeScalars)
            #expect(try Punycode.decode(Punycode.encode(scalars)) == scalars)
        }
    }
}
