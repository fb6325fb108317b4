/// Synthetic block-list names shaped like real ones: mostly registrable names (`label.tld`), a
/// quarter with one more label (`www.`, `cdn.`, `api.` …, half of them under a name already
/// listed), and a tenth three labels deep. Labels are 5 to 14 random characters.
enum Synthetic {
    static let topLevel = ["com", "net", "org", "io", "co", "de", "ru", "info", "xyz", "app", "top", "fr", "jp",
                           "br", "in", "it", "nl", "pl", "es", "site", "online", "tv", "me", "us", "cn"].map { Array($0.utf8) }
    static let prefixes = ["www", "m", "api", "cdn", "static", "img", "ads", "track", "i", "mobile", "edge", "video"]
        .map { Array($0.utf8) }
    static let alphabet = Array("abcdefghijklmnopqrstuvwxyz0123456789".utf8)

    static func label(_ random: inout SplitMix64) -> [UInt8] {
        let length = 5 + random.below(10)
        var label: [UInt8] = []
        label.reserveCapacity(length)
        // A letter first, so that no label is all digits.
        label.append(alphabet[random.below(26)])
        for _ in 1..<length { label.append(alphabet[random.below(alphabet.count)]) }
        return label
    }

    static func registrable(_ random: inout SplitMix64) -> [UInt8] {
        label(&random) + [UInt8(ascii: ".")] + topLevel[random.below(topLevel.count)]
    }

    static func domains(_ count: Int, seed: UInt64) -> PackedNames {
        var random = SplitMix64(state: seed)
        var names = PackedNames()
        var bases: [[UInt8]] = []
        for _ in 0..<count {
            let roll = random.below(100)
            if roll < 65 || bases.isEmpty {
                let base = registrable(&random)
                bases.append(base)
                names.append(base)
            } else if roll < 90 {
                let base = random.below(2) == 0 ? bases[random.below(bases.count)] : registrable(&random)
                let prefix = random.below(3) == 0 ? label(&random) : prefixes[random.below(prefixes.count)]
                names.append(prefix + [UInt8(ascii: ".")] + base)
            } else {
                names.append(label(&random) + [UInt8(ascii: ".")] + label(&random) + [UInt8(ascii: ".")] + registrable(&random))
            }
        }
        return names
    }

    /// Queries in equal thirds: listed names, names under a listed name, and names not listed.
    static func queries(_ count: Int, from listed: PackedNames, seed: UInt64) -> PackedNames {
        var random = SplitMix64(state: seed)
        var queries = PackedNames()
        for index in 0..<count {
            let listedName = Array(listed.bytes[listed.range(random.below(listed.count))])
            switch index % 3 {
            case 0: queries.append(listedName)
            case 1: queries.append(prefixes[random.below(prefixes.count)] + [UInt8(ascii: ".")] + listedName)
            default: queries.append(prefixes[random.below(prefixes.count)] + [UInt8(ascii: ".")] + registrable(&random))
            }
        }
        return queries
    }

    /// A hosts file of the given names, with a header and some comments, as a fetched list would be.
    static func hostsFile(_ names: PackedNames) -> [UInt8] {
        var text = Array("# Synthetic hosts list for the matcher benchmark\n127.0.0.1 localhost\n::1 localhost\n".utf8)
        for index in 0..<names.count {
            if index % 5000 == 0 { text.append(contentsOf: "# section \(index / 5000)\n".utf8) }
            text.append(contentsOf: "0.0.0.0 ".utf8)
            text.append(contentsOf: names.bytes[names.range(index)])
            text.append(UInt8(ascii: "\n"))
        }
        return text
    }
}
