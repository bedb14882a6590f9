import Synchronization

/// The values ``Defaults`` decoded last, one per key, so that reading an unchanged `Codable` or
/// collection value does not decode it again.
///
/// An entry is used only while the stored value equals the one it was decoded from. That check
/// needs no change events, so it cannot race with writers anywhere (another `Defaults`, the
/// provider itself, another process): a read sees the current stored value and decodes it when
/// it differs. It is cheap where it matters: a provider that keeps its values in memory hands out
/// the same array and dictionary storage each time, and Swift compares those by identity first.
///
/// Its read is inlinable so that it is specialized for the value type in the caller's module:
/// unspecialized, finding `Box<T>`'s metadata would cost more than the rest of the read.
@usableFromInline
final class DecodedValueCache: Sendable {
    /// How a value was decoded: through its ``DefaultsSerializable`` conformance, or as `Codable`
    /// with a given strategy. The same stored value may decode differently in each.
    @usableFromInline
    enum Method: Hashable, Sendable {
        case bridge
        case codable(DefaultsCodingStrategy)
    }

    @usableFromInline
    struct Entry: Sendable {
        @usableFromInline var source: DefaultsValue
        @usableFromInline var method: Method
        /// A `Box<T>`: a class cast back to it is cheaper than casting an existential.
        @usableFromInline var box: any AnyObject & Sendable
    }

    @usableFromInline
    final class Box<T: Sendable>: Sendable {
        @usableFromInline let value: T
        @usableFromInline init(_ value: T) { self.value = value }
    }

    @usableFromInline let entries = Mutex<[String: Entry]>([:])

    @usableFromInline init() {}

    /// The value decoded as `type` from a stored value equal to `source`, if there is one.
    @inlinable
    func value<T: Sendable>(_ type: T.Type, method: Method, forKey key: String, source: DefaultsValue) -> T? {
        guard let entry = entries.withLock({ $0[key] }), entry.method == method,
              let box = entry.box as? Box<T>
        else { return nil }
        // Compared outside the lock: a large value must not hold other readers up.
        guard entry.source == source else { return nil }
        return box.value
    }

    /// Keeps `value`, decoded as `T` from `source`, for `key`.
    @usableFromInline
    func store<T: Sendable>(_ value: T, method: Method, forKey key: String, source: DefaultsValue) {
        let entry = Entry(source: source, method: method, box: Box(value))
        entries.withLock { $0[key] = entry }
    }

    /// Forgets the entry for `key`, to free memory once the value is gone or replaced.
    func remove(forKey key: String) {
        _ = entries.withLock { $0.removeValue(forKey: key) }
    }

    /// Forgets the entries whose keys are under `prefix` (all of them for `""`), as
    /// ``DefaultsKeyPrefix`` defines it. Only memory is at stake: an entry is never used once its
    /// stored value changed.
    func removeAll(withPrefix prefix: String) {
        let prefix = DefaultsKeyPrefix(prefix)
        entries.withLock { entries in
            if prefix.isEmpty {
                entries.removeAll()
            } else {
                entries = entries.filter { !prefix.contains($0.key) }
            }
        }
    }
}
