/// A downloaded list named in the configuration file (`[[lists.source]]`).
public struct ConfiguredListSource: Sendable, Equatable {
    public var name: String
    public var url: String
    public init(name: String, url: String) {
        self.name = name
        self.url = url
    }
}
