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
        return head.hasPrefix("bplist") || head.hasPrefix("<?xml") || head.hasPrefix("<plist") ? .plist : .json
    }
}
