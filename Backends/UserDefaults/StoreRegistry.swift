import Synchronization

/// The suites open in this process, so that every provider instance on one suite shares one store:
/// a second instance sees the first one's writes at once, and their events are ordered together.
///
/// Stores are held weakly and go away with their last provider.
enum StoreRegistry {
    private struct Entry {
        weak var store: UserDefaultsProvider.Store?
    }

    private static let stores = Mutex<[String: Entry]>([:])

    /// The open store for `key`, or a new one made by `make`.
    static func store(
        forKey key: String, make: () -> UserDefaultsProvider.Store
    ) -> UserDefaultsProvider.Store {
        stores.withLock { stores in
            if let store = stores[key]?.store { return store }
            if stores.count >= 64 { stores = stores.filter { $0.value.store != nil } }
            let store = make()
            stores[key] = Entry(store: store)
            return store
        }
    }
}
