import AnyDefaults
import Foundation

/// What `bench` measures: a store, or Foundation's `UserDefaults` as the baseline.
protocol BenchTarget {
    func read(_ key: String) throws
    func write(_ value: String, forKey key: String) throws
    /// Writes every pair, as one batch where the store has batches.
    func writeBatch(_ pairs: [(key: String, value: String)]) throws
    /// Ends a run of writes (UserDefaults writes its file only now).
    func finishWrites() throws
    /// Removes the keys written, `written` holding the last value written to each: those only,
    /// and only while they still hold it, so that a key another process wrote meanwhile stays.
    func clear(_ written: [String: String]) throws
}

/// A store through the ``DefaultsProvider`` protocol: each write is one `setValue`, a batch is
/// one `apply`.
struct ProviderBenchTarget: BenchTarget {
    let provider: any DefaultsProvider

    func read(_ key: String) throws { _ = try provider.value(forKey: key) }
    func write(_ value: String, forKey key: String) throws { try provider.setValue(.string(value), forKey: key) }
    func writeBatch(_ pairs: [(key: String, value: String)]) throws { try provider.apply(pairs.map { .set($0.key, .string($0.value)) }) }
    func finishWrites() throws {}
    func clear(_ written: [String: String]) throws { _ = try provider.removeValues(ifUnchanged: written.mapValues { .string($0) }) }
}

/// Plain Foundation `UserDefaults` on a suite of its own, used as an application uses it:
/// `object(forKey:)`, `set(_:forKey:)`, and `synchronize()` once at the end of a run of writes
/// (it keeps writes in memory until then).
struct UserDefaultsBenchTarget: BenchTarget {
    let suiteName: String
    let defaults: UserDefaults

    /// A new suite, removed with `scratch` if the command is interrupted before ``clear(_:)``.
    init(scratch: ScratchArea) throws(CommandFailure) {
        suiteName = "anydefaults-bench-baseline-\(UUID().uuidString)"
        guard let defaults = UserDefaults(suiteName: suiteName) else {
            throw CommandFailure(ExitStatus.software, "Foundation refused the scratch suite \(suiteName)")
        }
        self.defaults = defaults
        scratch.track(suite: suiteName)
    }

    func read(_ key: String) throws { _ = defaults.object(forKey: key) }
    func write(_ value: String, forKey key: String) throws { defaults.set(value, forKey: key) }
    func writeBatch(_ pairs: [(key: String, value: String)]) throws {
        for (key, value) in pairs { defaults.set(value, forKey: key) }
        defaults.synchronize()
    }
    func finishWrites() throws { defaults.synchronize() }
    /// Removes the whole scratch suite, which holds nothing but what was written.
    func clear(_ written: [String: String]) throws {
        defaults.removePersistentDomain(forName: suiteName)
        ScratchArea.removeSuite(suiteName)
    }
}
