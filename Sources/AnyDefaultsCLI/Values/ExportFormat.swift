import AnyDefaults
import ArgumentParser
import Foundation

/// The file formats of `export` and `import`: both exact and typed, so an import gives back the
/// store that was exported, in any backend.
enum ExportFormat: String, ExpressibleByArgument, CaseIterable {
    /// The JSON file backend's exact JSON (``ExactJSON``): an export is itself a `json:` store.
    case json
    /// A binary property list (``ExactPropertyList``), as Foundation reads it; `import` also reads
    /// XML property lists.
    case plist

    /// The file's bytes for `store`.
    func encode(_ store: [String: DefaultsValue]) -> Data {
        switch self {
        case .json: ExactJSON.data(from: store)
        case .plist: ExactPropertyList.data(from: store)
        }
    }

    /// The store a file holds.
    func decode(_ data: Data) throws(DefaultsError) -> [String: DefaultsValue] {
        switch self {
        case .json: try ExactJSON.store(from: data)
        case .plist: try ExactPropertyList.store(from: data)
        }
    }

    /// The format a file's first bytes show: a property list (binary, or XML) or else JSON.
    static func detect(_ data: Data) -> ExportFormat {
        let head = String(decoding: data.prefix(64), as: UTF8.self).trimmingCharacters(in: .whitespacesAndNewlines)
        let start = head.hasPrefix("\u{FEFF}") ? String(head.dropFirst()) : head
        return start.hasPrefix("bplist") || start.hasPrefix("<") ? .plist : .json
    }

    /// Whether a file of `format` (`nil`: detected) can start with `byte`, its first byte that is
    /// not white space: `{` for JSON (an export is an object); `<` or `b` (`bplist`) for a
    /// property list, and for OpenStep text given as `--format plist` also `{`, `(`, `"`, `'`,
    /// `/` (a comment) or an unquoted word.
    static func mayStart(with byte: UInt8, as format: ExportFormat?) -> Bool {
        let plist = byte == UInt8(ascii: "<") || byte == UInt8(ascii: "b")
        switch format {
        case .json: return byte == UInt8(ascii: "{")
        case nil: return byte == UInt8(ascii: "{") || plist
        case .plist:
            let word = (UInt8(ascii: "a")...UInt8(ascii: "z")).contains(byte | 0x20) || (UInt8(ascii: "0")...UInt8(ascii: "9")).contains(byte)
                || byte == UInt8(ascii: "_") || byte == UInt8(ascii: "$")
            return plist || word || [UInt8(ascii: "{"), UInt8(ascii: "("), UInt8(ascii: "\""), UInt8(ascii: "'"), UInt8(ascii: "/")].contains(byte)
        }
    }
}
