/// The coding key for a position in an array.
struct IndexCodingKey: CodingKey {
    let index: Int
    init(_ index: Int) { self.index = index }
    init?(stringValue: String) { nil }
    init(intValue: Int) { index = intValue }
    var stringValue: String { "Index \(index)" }
    var intValue: Int? { index }
}

/// A coding key for a dictionary entry or the `super` entry.
struct NameCodingKey: CodingKey {
    let stringValue: String
    init(_ name: String) { stringValue = name }
    init(stringValue: String) { self.stringValue = stringValue }
    init?(intValue: Int) { stringValue = String(intValue) }
    var intValue: Int? { nil }
}

enum CodingPath {
    /// Where inside a stored value something failed, in the form `settings.window.frame[2].width`:
    /// the defaults key, then the properties and indexes.
    static func describe(_ path: [any CodingKey], key: String?) -> String {
        var text = key ?? ""
        for component in path {
            if let index = component as? IndexCodingKey {
                text += "[\(index.index)]"
            } else {
                if !text.isEmpty { text += "." }
                text += component.stringValue
            }
        }
        return text.isEmpty ? "the top level" : text
    }
}
