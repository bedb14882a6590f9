import AnyDefaultsCore
import AnyDefaultsLMDB
import BenchmarkData
import Foundation
import Synchronization

/// The stores the read, write and batch benchmarks use: for each sync setting, one opened through
/// LMDBProvider (plain, one through a cache, one that another process watches) and one opened
/// with the C API, each in its own directory (LMDB allows one environment per file per process),
/// holding the same 1000 keys.
final class LMDBFixtures: Sendable {
    static let readKey = "settings.500"
    static let keyCount = 1000
    /// The keys a batch writes.
    static let batchKeys = (0..<10).map { "batch.key.\($0)" }

    let providers: [LMDBProvider.Options.Durability: LMDBProvider]
    let cached: [LMDBProvider.Options.Durability: CachingProvider<LMDBProvider>]
    /// Stores that another process watches (a lease on the change log is recorded), so that each
    /// write also logs the key it changed.
    let watched: [LMDBProvider.Options.Durability: LMDBProvider]
    let raw: [LMDBProvider.Options.Durability: RawLMDBStore]
    /// Synced stores for batches.
    let batchProvider: LMDBProvider
    let cachedBatch: CachingProvider<LMDBProvider>
    /// A synced store behind a journal (`journal=on`), plain and through a cache.
    let journaled: JournaledProvider<LMDBProvider>
    let journaledCached: CachingProvider<JournaledProvider<LMDBProvider>>
    private let counter = Atomic<Int64>(0)

    /// A number never returned before, so that every write stores a new value.
    func nextNumber() -> Int64 {
        counter.add(1, ordering: .relaxed).newValue
    }

    init(directory: URL) throws {
        let seed = (0..<Self.keyCount).map { DefaultsChange.set("settings.\($0)", .int(Int64($0))) }
        func provider(_ name: String, _ durability: LMDBProvider.Options.Durability) throws -> LMDBProvider {
            let provider = try LMDBProvider(path: directory.appendingPathComponent(name).path, options: .init(durability: durability))
            try provider.apply(seed)
            return provider
        }
        var providers: [LMDBProvider.Options.Durability: LMDBProvider] = [:]
        var cached: [LMDBProvider.Options.Durability: CachingProvider<LMDBProvider>] = [:]
        var raw: [LMDBProvider.Options.Durability: RawLMDBStore] = [:]
        var watched: [LMDBProvider.Options.Durability: LMDBProvider] = [:]
        for durability in [LMDBProvider.Options.Durability.synced, .noSync, .mapped] {
            let name = switch durability {
            case .synced: "synced"
            case .noSync: "nosync"
            case .mapped: "mapped"
            }
            providers[durability] = try provider("provider-\(name)", durability)
            cached[durability] = try provider("cached-\(name)", durability).cached()
            let store = try RawLMDBStore(
                path: directory.appendingPathComponent("raw-\(name)").path, noSync: durability != .synced, writeMap: durability == .mapped)
            store.write((0..<Self.keyCount).lazy.map { ("settings.\($0)", Int64($0)) })
            raw[durability] = store
            let watchedPath = directory.appendingPathComponent("watched-\(name)").path
            try provider("watched-\(name)", durability).close()
            try RawLMDBStore.leaseToAnotherProcess(path: watchedPath)
            watched[durability] = try LMDBProvider(path: watchedPath, options: .init(durability: durability))
        }
        self.providers = providers
        self.cached = cached
        self.watched = watched
        self.raw = raw
        batchProvider = try provider("batch-provider", .synced)
        cachedBatch = try provider("batch-cached", .synced).cached()
        journaled = try provider("journaled", .synced).journaled()
        journaledCached = try provider("journaled-cached", .synced).journaled().cached()
    }

    deinit {
        for provider in providers.values { provider.close() }
        for cache in cached.values { cache.upstream.close() }
        for provider in watched.values { provider.close() }
        batchProvider.close()
        cachedBatch.upstream.close()
    }
}
