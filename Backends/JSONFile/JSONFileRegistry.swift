import AnyDefaultsCore
import Synchronization

/// The process-wide map from a canonical file path to the store open on it, so that every
/// ``JSONFileProvider`` on one file shares one state and sees the others' writes at once.
///
/// Holds stores weakly: a store lives as long as a provider uses it.
enum JSONFileRegistry {
    private struct Entry {
        weak var store: JSONFileStore?
    }

    private static let stores = Mutex<[String: Entry]>([:])

    /// The store open on `path`, or a new one loaded with `options`; and whether it is new.
    static func store(
        for path: String, options: JSONFileProvider.Options
    ) throws(DefaultsError) -> (store: JSONFileStore, isNew: Bool) {
        try stores.withLock { stores throws(DefaultsError) -> (store: JSONFileStore, isNew: Bool) in
            if let store = stores[path]?.store { return (store, false) }
            stores = stores.filter { $0.value.store != nil }
            let store = try JSONFileStore(path: path, options: options)
            stores[path] = Entry(store: store)
            return (store, true)
        }
    }
}
