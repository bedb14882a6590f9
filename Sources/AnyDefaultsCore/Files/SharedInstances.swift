import Synchronization

/// The objects open in this process, one per key, held weakly: how every provider instance on one
/// store finds the state it shares with the others (so that one instance sees another's writes at
/// once and their events are ordered together). An object lives as long as an instance uses it.
///
/// The key is the store's identity as the backend defines it: its canonical path for files that
/// every write replaces by `rename` (their inode changes each time), its suite name, or the path
/// of a file kept in place.
package final class SharedInstances<Key: Hashable & Sendable, Object: AnyObject & Sendable>: Sendable {
    private struct Entry: Sendable {
        weak var object: Object?
    }

    private let entries = Mutex<[Key: Entry]>([:])

    package init() {}

    /// The object open for `key`, or a new one made by `make` (under the table's lock, so that
    /// two threads never make two); and whether it is new. An open object that is not `usable`
    /// (its file was replaced) is replaced by a new one.
    package func object<Failure: Error>(
        for key: Key, reusing usable: (Object) -> Bool = { _ in true }, make: () throws(Failure) -> Object
    ) throws(Failure) -> (object: Object, isNew: Bool) {
        try entries.withLock { entries throws(Failure) -> (object: Object, isNew: Bool) in
            if let object = entries[key]?.object, usable(object) { return (object, false) }
            // Entries of objects gone are dropped as new ones come, so the table stays small.
            entries = entries.filter { $0.value.object != nil }
            let object = try make()
            entries[key] = Entry(object: object)
            return (object, true)
        }
    }

    /// The object open for `key`, if any.
    package func openObject(for key: Key) -> Object? {
        entries.withLock { $0[key]?.object }
    }

    /// Every object open now.
    package var openObjects: [Object] {
        entries.withLock { $0.values.compactMap(\.object) }
    }
}
