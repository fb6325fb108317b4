#if canImport(Glibc)
import Glibc
#elseif canImport(Darwin)
import Darwin
#endif

/// The curated catalog in `blocklists/` (SPEC §1): service lists people block by id or category,
/// and the always-allow lists.
///
/// File format (see `blocklists/README.md`): a header of `# key: value` lines at the top, then
/// one domain per line. `#` comments may follow the first domain. Service lists need `id`
/// (equal to the file name), `name`, `category` and `source`, and may add `note` and `license`;
/// allow lists need `name` and `purpose`, and may add `note`, `source` and `license`. Catalog files
/// ship with the program, so they are held to zero bad lines: any problem is an error that names
/// the file and the line.
public struct Catalog: Sendable {
    /// Services sorted by id.
    public var services: [CatalogService]
    /// Allow lists sorted by id.
    public var allowSets: [AllowSet]

    public init(services: [CatalogService], allowSets: [AllowSet]) {
        self.services = services.sorted { $0.id < $1.id }
        self.allowSets = allowSets.sorted { $0.id < $1.id }
    }

    public func service(id: String) -> CatalogService? {
        let id = id.lowercased()
        return services.first { $0.id == id }
    }

    public func services(in category: ServiceCategory) -> [CatalogService] {
        services.filter { $0.category == category }
    }

    /// The categories that have at least one service, sorted.
    public var categories: [ServiceCategory] {
        Set(services.map(\.category)).sorted()
    }

    /// What a word of `scrolloff block WORD` names: the one service with that id, or every service
    /// of that category. Nil when it is neither (then it may be a custom domain).
    public func resolve(_ word: String) -> [CatalogService]? {
        if let service = service(id: word) { return [service] }
        if let category = ServiceCategory(rawValue: word.lowercased()) { return services(in: category) }
        return nil
    }

    // MARK: loading

    /// Loads `<folder>/services/*.list` and `<folder>/allow/*.list`.
    public static func load(folder: String) throws(CatalogError) -> Catalog {
        var services: [CatalogService] = []
        for path in try listFiles(in: folder + "/services") {
            services.append(try CatalogFile.service(text: try readFile(path), file: path))
        }
        var firstFile: [String: String] = [:]
        for service in services {
            if let earlier = firstFile[service.id] {
                throw .duplicateService(id: service.id, files: [earlier, service.file])
            }
            firstFile[service.id] = service.file
        }
        var allowSets: [AllowSet] = []
        for path in try listFiles(in: folder + "/allow") {
            allowSets.append(try CatalogFile.allowSet(text: try readFile(path), file: path))
        }
        return Catalog(services: services, allowSets: allowSets)
    }

    /// Reads one list with a `name` and `purpose` header, such as an allow list or
    /// `blocklists/doh/encrypted-dns.list`.
    public static func loadNamedList(file path: String) throws(CatalogError) -> AllowSet {
        try CatalogFile.allowSet(text: try readFile(path), file: path)
    }

    /// The `.list` files of a folder, sorted so that loading is deterministic.
    static func listFiles(in folder: String) throws(CatalogError) -> [String] {
        guard let directory = opendir(folder) else { throw .unreadable(path: folder, errno: errno) }
        defer { closedir(directory) }
        var names: [String] = []
        while let entry = readdir(directory) {
            let name = withUnsafeBytes(of: entry.pointee.d_name) { raw in
                String(decoding: raw.prefix { $0 != 0 }, as: UTF8.self)
            }
            if name.hasSuffix(".list"), !name.hasPrefix(".") { names.append(name) }
        }
        return names.sorted().map { folder + "/" + $0 }
    }

    static func readFile(_ path: String) throws(CatalogError) -> [UInt8] {
        let descriptor = open(path, O_RDONLY | O_CLOEXEC)
        guard descriptor >= 0 else { throw .unreadable(path: path, errno: errno) }
        defer { close(descriptor) }
        var bytes: [UInt8] = []
        var chunk = [UInt8](repeating: 0, count: 64 * 1024)
        while true {
            let got = chunk.withUnsafeMutableBytes { read(descriptor, $0.baseAddress, $0.count) }
            if got == 0 { return bytes }
            if got < 0 {
                if errno == EINTR { continue }
                throw .unreadable(path: path, errno: errno)
            }
            bytes.append(contentsOf: chunk[0..<got])
        }
    }
}

/// Reads one catalog file.
enum CatalogFile {
    static let serviceKeys = ["id", "name", "category", "source", "note", "license"]
    static let allowKeys = ["name", "purpose", "note", "source", "license"]

    static func service(text: [UInt8], file: String) throws(CatalogError) -> CatalogService {
        let parsed = try parse(text, file: file, knownKeys: serviceKeys)
        let expectedID = stem(of: file)
        let (id, idLine) = try parsed.required("id")
        guard id == expectedID else { throw .idMismatch(file: file, line: idLine, id: id, expected: expectedID) }
        let (categoryText, categoryLine) = try parsed.required("category")
        guard let category = ServiceCategory(rawValue: categoryText) else {
            throw .unknownCategory(file: file, line: categoryLine, category: categoryText)
        }
        return CatalogService(
            id: id, name: try parsed.required("name").value, category: category,
            source: try parsed.required("source").value, note: parsed.headers["note"]?.value,
            license: parsed.headers["license"]?.value, rules: parsed.rules, file: file
        )
    }

    static func allowSet(text: [UInt8], file: String) throws(CatalogError) -> AllowSet {
        let parsed = try parse(text, file: file, knownKeys: allowKeys)
        return AllowSet(
            id: stem(of: file), name: try parsed.required("name").value, purpose: try parsed.required("purpose").value,
            note: parsed.headers["note"]?.value, source: parsed.headers["source"]?.value,
            license: parsed.headers["license"]?.value, rules: parsed.rules, file: file
        )
    }

    struct Parsed {
        var file: String
        var headers: [String: (value: String, line: Int)] = [:]
        var rules = RuleList()

        func required(_ key: String) throws(CatalogError) -> (value: String, line: Int) {
            guard let header = headers[key] else { throw .missingHeader(file: file, key: key) }
            return header
        }
    }

    static func parse(_ text: [UInt8], file: String, knownKeys: [String]) throws(CatalogError) -> Parsed {
        var parsed = Parsed(file: file)
        var classifier = LineClassifier()
        var inHeader = true
        var lineNumber = 0
        var lines = text.split(separator: UInt8(ascii: "\n"), omittingEmptySubsequences: false)
        if text.last == UInt8(ascii: "\n") { lines.removeLast() }
        for var line in lines {
            lineNumber += 1
            if lineNumber == 1, line.starts(with: [0xEF, 0xBB, 0xBF]) { line = line.dropFirst(3) }
            if inHeader, let (key, value) = header(line) {
                guard knownKeys.contains(key) else {
                    throw .unknownHeader(file: file, line: lineNumber, key: key, known: knownKeys)
                }
                guard parsed.headers[key] == nil else { throw .duplicateHeader(file: file, line: lineNumber, key: key) }
                guard !value.isEmpty else { throw .emptyHeader(file: file, line: lineNumber, key: key) }
                parsed.headers[key] = (value, lineNumber)
                continue
            }
            let before = classifier.skipped
            let result = line.withUnsafeBufferPointer { classifier.classify($0) }
            switch result {
            case .rules(.plain):
                inHeader = false
            case .skipped where classifier.skipped.comments > before.comments || classifier.skipped.blank > before.blank:
                continue
            case .bad(let reason):
                throw .badLine(file: file, line: lineNumber, reason: reason)
            case .rules, .skipped:
                // Another format, a wildcard, or a line the parser sets aside (`localhost`,
                // `##` rules): catalog lists hold plain domains only.
                throw .notADomainLine(file: file, line: lineNumber, text: String(decoding: line.prefix(80), as: UTF8.self))
            }
        }
        parsed.rules = classifier.rules
        guard !parsed.rules.isEmpty else { throw .noDomains(file: file) }
        return parsed
    }

    /// `# key: value` with a lowercase key of letters and `-`, or nil for any other line.
    static func header(_ line: ArraySlice<UInt8>) -> (key: String, value: String)? {
        let text = String(decoding: line, as: UTF8.self)
        guard text.hasPrefix("# "), let colon = text.firstIndex(of: ":") else { return nil }
        let key = text[text.index(text.startIndex, offsetBy: 2)..<colon]
        guard !key.isEmpty, key.allSatisfy({ $0 == "-" || ("a"..."z").contains($0) }) else { return nil }
        let value = text[text.index(after: colon)...].trimmingSpaces()
        return (String(key), value)
    }

    static func stem(of path: String) -> String {
        let name = path.split(separator: "/").last.map(String.init) ?? path
        return name.hasSuffix(".list") ? String(name.dropLast(5)) : name
    }
}

extension Substring {
    func trimmingSpaces() -> String {
        let isSpace: (Character) -> Bool = { $0 == " " || $0 == "\t" || $0 == "\r" }
        guard let first = firstIndex(where: { !isSpace($0) }), let last = lastIndex(where: { !isSpace($0) }) else { return "" }
        return String(self[first...last])
    }
}
