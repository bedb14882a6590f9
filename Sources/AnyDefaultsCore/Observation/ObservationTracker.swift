import Observation
import Synchronization

/// Lets reads through ``Defaults`` take part in Swift's Observation, one key at a time.
///
/// Observation tracks `(registrar, key path)` pairs. A store's keys are strings, not properties,
/// so each key gets a key path of its own through a subscript, `\.[key: "volume"]`: key paths
/// with equal arguments are equal, so a read of `"volume"` and a change of `"volume"` meet, and a
/// change of any other key does not. A read records the key path with ``access(_:)``; a change
/// reported by the provider calls `withMutation` for its key path, which fires the `onChange` of
/// every `withObservationTracking` that read that key.
///
/// Building a key path with an argument is slow (about a microsecond), so they are built once:
/// typed keys carry theirs, and the others are kept here by key.
@usableFromInline
final class ObservationTracker: Observable, Sendable {
    /// A key path that names one key of the store.
    @usableFromInline typealias KeyPathType = KeyPath<ObservationTracker, Bool> & Sendable

    @usableFromInline let registrar = ObservationRegistrar()

    /// The key paths built so far, by full key. Bounded: a program that invents keys without end
    /// (`"cache.\(id)"`) must not grow it without end; a forgotten key path is built again.
    private let keyPaths = Mutex<[String: KeyPathType]>([:])
    private static let keyPathLimit = 4096

    @usableFromInline init() {}

    /// The key path that stands for `key`; only its argument matters.
    subscript(key key: String) -> Bool { false }

    /// Stands for the set of keys and for every value at once (``Defaults/keys()``, snapshots).
    var everyKey: Bool { false }

    /// The key path for `key`, built on first use.
    static func makeKeyPath(_ key: String) -> KeyPathType {
        \ObservationTracker.[key: key]
    }

    /// The key path for `key`, from the ones built before when possible.
    @usableFromInline
    func keyPath(for key: String) -> KeyPathType {
        if let known = keyPaths.withLock({ $0[key] }) { return known }
        let keyPath = Self.makeKeyPath(key)
        keyPaths.withLock { keyPaths in
            if keyPaths.count >= Self.keyPathLimit { keyPaths.removeAll(keepingCapacity: true) }
            keyPaths[key] = keyPath
        }
        return keyPath
    }

    /// Records a read of the key `keyPath` stands for, when inside `withObservationTracking`.
    @inlinable
    func access(_ keyPath: KeyPathType) {
        registrar.access(self, keyPath: keyPath)
    }

    /// Records a read of `key`.
    @usableFromInline
    func access(key: String) {
        registrar.access(self, keyPath: keyPath(for: key))
    }

    /// Records a read of every key (a listing or a snapshot of the whole store).
    func accessEveryKey() {
        everyKeyRead.store(true, ordering: .sequentiallyConsistent)
        registrar.access(self, keyPath: \.everyKey)
    }

    /// Whether ``accessEveryKey()`` was ever called: until then no one can be observing every
    /// key, and a change need not say so (a registrar call costs about as much as a cached read).
    private let everyKeyRead = Atomic(false)

    /// Tells observers of `key`, and of every key, that it changed; `keyPath` is the key path of
    /// `key` when the caller has it, which saves looking it up.
    func didChange(_ key: String, keyPath known: KeyPathType?) {
        if let known {
            registrar.withMutation(of: self, keyPath: known) {}
        } else {
            registrar.withMutation(of: self, keyPath: keyPath(for: key)) {}
        }
        if everyKeyRead.load(ordering: .sequentiallyConsistent) {
            registrar.withMutation(of: self, keyPath: \.everyKey) {}
        }
    }
}
