import AnyDefaultsCore
import Foundation

/// The exact property-list encoding of the UserDefaults backend, for a whole store: a binary
/// property list (`bplist00`) with one native object per value, which Foundation and
/// `PropertyListSerialization` read as ordinary property lists.
///
/// Every ``AnyDefaultsCore/DefaultsValue`` reads back exactly: `-0.0`, NaN and the infinities,
/// fractions of a second in dates, `Int64.min` and `.max`, strings with NUL or in NFD, and
/// booleans, integers and reals kept apart. (An XML property list cannot do this: it loses the
/// sign of `-0.0` and the fraction of a second of a date.) It uses the backend's own binary
/// writer and reader, which check every offset and nesting depth of what they read.
///
/// ```swift
/// let data = ExactPropertyList.data(from: ["volume": .double(-0.0)])
/// try ExactPropertyList.store(from: data)   // ["volume": .double(-0.0)]
/// ```
public enum ExactPropertyList {
    static let backend = "PropertyList"

    /// The binary property list of a whole store: a top-level dictionary of key to value.
    public static func data(from store: [String: DefaultsValue]) -> Data {
        BinaryPropertyListWriter.write(store.mapValues(PropertyListNode.init))
    }

    /// Reads a whole store from a property list whose top level is a dictionary: a binary one,
    /// or any other format Foundation reads (XML).
    ///
    /// - Throws: ``AnyDefaultsCore/DefaultsError/Code-swift.struct/corrupted`` when the data is
    ///   not such a property list; ``AnyDefaultsCore/DefaultsError/Code-swift.struct/invalidKey``
    ///   for an empty key; ``AnyDefaultsCore/DefaultsError/Code-swift.struct/invalidValue`` (with
    ///   the key) for an integer above `Int64.max`, which a `DefaultsValue` cannot hold;
    ///   `corrupted` for a dictionary that names a key twice (also two spellings of a key that are
    ///   equal after Unicode normalization), as the JSON reader refuses it.
    public static func store(from data: Data) throws(DefaultsError) -> [String: DefaultsValue] {
        let domain: [String: PropertyListNode]
        switch PropertyListParser.dictionary(from: Array(data), rejectingDuplicateKeys: true) {
        case .success(let parsed): domain = parsed
        case .failure(let reason):
            throw DefaultsError(.corrupted, "Not a property list of settings: \(reason).", backend: backend)
        }
        var store: [String: DefaultsValue] = [:]
        store.reserveCapacity(domain.count)
        for (key, node) in domain {
            let key = try DefaultsValidation.canonicalKey(key, backend: backend)
            guard let value = node.defaultsValue else {
                throw DefaultsError(
                    .invalidValue, "The value holds an integer above Int64.max, which a DefaultsValue cannot hold.",
                    backend: backend, key: key)
            }
            store[key] = value
        }
        return store
    }
}
