/// Values by canonical key with the keys kept in order for prefix queries: a dictionary's
/// operations, keeping the order up to date. The state of the stores that hold every value in
/// memory (``MemoryProvider``-like stores, ``JournaledProvider``'s mirror).
package struct KeyedValues: Sendable {
    package private(set) var values: [String: DefaultsValue]
    private var order: SortedKeySet

    package init(_ values: [String: DefaultsValue] = [:]) {
        self.values = values
        order = SortedKeySet(values.keys)
    }

    package subscript(key: String) -> DefaultsValue? {
        get { values[key] }
        set {
            // Only a key that comes or goes changes the order; a new value for a key does not.
            if let newValue {
                if values.updateValue(newValue, forKey: key) == nil { order.insert(key) }
            } else {
                removeValue(forKey: key)
            }
        }
    }

    /// Stores `value` for `key` and tells whether that changed anything, hashing the key once.
    package mutating func update(_ value: DefaultsValue, forKey key: String) -> Bool {
        replaceValue(value, forKey: key) != value
    }

    /// Stores `value` for `key` and returns the value it replaces, hashing the key once.
    package mutating func replaceValue(_ value: DefaultsValue, forKey key: String) -> DefaultsValue? {
        let old = values.updateValue(value, forKey: key)
        if old == nil { order.insert(key) }
        return old
    }

    @discardableResult
    package mutating func removeValue(forKey key: String) -> DefaultsValue? {
        let removed = values.removeValue(forKey: key)
        if removed != nil { order.remove(key) }
        return removed
    }

    package mutating func removeAll() {
        values.removeAll()
        order.removeAll()
    }

    package var keys: Dictionary<String, DefaultsValue>.Keys { values.keys }

    package func keys(withPrefix prefix: DefaultsKeyPrefix) -> [String] {
        order.keys(withPrefix: prefix)
    }

    /// The values under `prefix`, from the ordered index: no scan of the other keys.
    package func values(withPrefix prefix: DefaultsKeyPrefix) -> [String: DefaultsValue] {
        var result: [String: DefaultsValue] = [:]
        for key in order.keys(withPrefix: prefix) { result[key] = values[key] }
        return result
    }
}
