#if canImport(Darwin)
import AnyDefaultsCore
import CoreFoundation
import Foundation
import Synchronization

/// One suite in this process on Apple platforms, read and written through CFPreferences: the
/// persistent domain of the suite for the current user and any host, exactly what
/// `UserDefaults(suiteName:)` writes (without the global domain, registration defaults or launch
/// arguments that `UserDefaults.object(forKey:)` would mix in).
///
/// `cfprefsd` keeps the file, writes it atomically and keeps every process's reads current, so
/// this store keeps nothing but the lock that orders this process's read-compare-write cycles, so
/// that events are exact.
final class PreferencesDomainStore: Sendable {
    let suiteName: String?
    let listeners = InstanceListeners()
    private let writes = Mutex(())

    init(suiteName: String?) {
        self.suiteName = suiteName
    }

    var fileURL: URL? { nil }

    /// Changes made by other processes are not reported on Apple platforms.
    func watch() -> Bool { false }

    /// The CFPreferences application identifier of the suite.
    private var domain: CFString {
        if let suiteName { return suiteName as CFString }
        return kCFPreferencesCurrentApplication
    }

    func value(forKey key: String, options: UserDefaultsProvider.Options) throws(DefaultsError) -> DefaultsValue? {
        let object: CFPropertyList? = CFPreferencesCopyValue(
            key as CFString, domain, kCFPreferencesCurrentUser, kCFPreferencesAnyHost)
        guard let object else { return nil }
        return PropertyListNode(object: object)?.defaultsValue
    }

    func allValues(options: UserDefaultsProvider.Options) throws(DefaultsError) -> [String: DefaultsValue] {
        let copied: CFDictionary? = CFPreferencesCopyMultiple(
            nil, domain, kCFPreferencesCurrentUser, kCFPreferencesAnyHost)
        guard let copied, let objects = (copied as NSDictionary) as? [String: Any] else { return [:] }
        return PropertyListNode.values(fromDomain: objects.compactMapValues { PropertyListNode(object: $0) })
    }

    /// Nothing to do: `cfprefsd` keeps reads current.
    func refresh(options: UserDefaultsProvider.Options) throws(DefaultsError) {}

    /// Reads the domain under this process's write lock, lets `decide` choose the changes from
    /// its values (`nil`: remove everything), and saves them. Returns the events of the changes
    /// made.
    ///
    /// CFPreferences skips a write whose value is `CFEqual` to the stored one, and `CFEqual`
    /// calls `1` and `1.0`, or `0.0` and `-0.0`, equal; such a key is removed first so that the
    /// new type and bits are stored. That makes the batch two steps, which is one reason the
    /// provider does not claim atomic batches here.
    @discardableResult
    func update(
        from writer: Int, options: UserDefaultsProvider.Options, _ decide: ([String: DefaultsValue]) -> [DefaultsChange]?
    ) throws(DefaultsError) -> [DefaultsChangeEvent] {
        let events = try writes.withLock { _ throws(DefaultsError) -> [DefaultsChangeEvent] in
            var values = try allValues(options: options)
            let changes = decide(values)
            var toSet: [String: Any] = [:]
            var toRemove: Set<String> = []
            var clearFirst: [String] = []
            var events: [DefaultsChangeEvent] = []
            if let changes {
                for change in changes {
                    switch change {
                    case .set(let key, let value):
                        let old = values[key]
                        guard old != value else { continue }
                        if let old, Self.mayCompareEqual(old, value) { clearFirst.append(key) }
                        values[key] = value
                        toSet[key] = PropertyListNode(value).object
                        toRemove.remove(key)
                        events.append(DefaultsChangeEvent(key: key, newValue: value))
                    case .remove(let key):
                        toSet[key] = nil
                        toRemove.insert(key)
                        if values.removeValue(forKey: key) != nil {
                            events.append(DefaultsChangeEvent(key: key, newValue: nil))
                        }
                    }
                }
            } else {
                let stored: CFArray? = CFPreferencesCopyKeyList(domain, kCFPreferencesCurrentUser, kCFPreferencesAnyHost)
                toRemove = Set(stored.flatMap { ($0 as NSArray) as? [String] } ?? [])
                events = values.keys.map { DefaultsChangeEvent(key: $0, newValue: nil) }
            }
            guard !toSet.isEmpty || !toRemove.isEmpty else { return [] }
            if !clearFirst.isEmpty {
                CFPreferencesSetMultiple(nil, clearFirst as CFArray, domain, kCFPreferencesCurrentUser, kCFPreferencesAnyHost)
            }
            CFPreferencesSetMultiple(
                toSet.isEmpty ? nil : toSet as CFDictionary,
                toRemove.isEmpty ? nil : Array(toRemove) as CFArray,
                domain, kCFPreferencesCurrentUser, kCFPreferencesAnyHost)
            guard CFPreferencesSynchronize(domain, kCFPreferencesCurrentUser, kCFPreferencesAnyHost) else {
                throw DefaultsError(
                    .ioFailure, "CFPreferences could not save the suite.", backend: UserDefaultsProvider.backend)
            }
            listeners.enqueue(events, from: writer)
            return events
        }
        listeners.deliverPending()
        return events
    }

    /// Whether CFPreferences might take `new` for the stored `old` although they differ.
    private static func mayCompareEqual(_ old: DefaultsValue, _ new: DefaultsValue) -> Bool {
        switch (old, new) {
        case (.int, .double), (.double, .int), (.double, .double), (.date, .date), (.array, .array),
            (.dictionary, .dictionary):
            true
        default:
            false
        }
    }

    /// Removes the suite's persistent domain.
    static func removeSuite(_ suiteName: String) {
        UserDefaults.standard.removePersistentDomain(forName: suiteName)
    }
}
#endif
