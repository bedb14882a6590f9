import AnyDefaultsCore
import Foundation
import Synchronization
import Testing
import TestSupport

import AnyDefaultsPlatform

/// `SharedChangeCounter` and a `CachingProvider` in front of a provider that offers one: a cache
/// never answers with a value another "process" replaced, with no change event at all.
@Suite struct SharedChangeCounterTests {
    /// Two providers on one storage, each with a counter of its own on one counter file, as two
    /// processes have; caches in front of both; random writes and reads through either side, in a
    /// seeded order, against a reference model. The storage sends no events: coherence rests on
    /// the counter alone.
    @Test func cachesInFrontOfTwoProcessesNeverReadAReplacedValue() throws {
        let seed = UInt64.random(in: 1...UInt64(UInt32.max))
        var random = SeededGenerator(seed: seed)
        try withTemporaryDirectory { directory in
            let storage = LoggedStorage()
            let first = try LoggedProvider(storage: storage, counterFile: directory.path("counter"), likeFile: directory.path("store"))
            let second = try LoggedProvider(storage: storage, counterFile: directory.path("counter"), likeFile: directory.path("store"))
            let caches = [first.cached(), second.cached()]
            var model: [String: DefaultsValue] = [:]
            var stale = 0
            for step in 0..<4_000 {
                let key = "k\(Int.random(in: 0..<6, using: &random))"
                let side = Int.random(in: 0..<2, using: &random)
                switch Int.random(in: 0..<10, using: &random) {
                case 0..<3:
                    let value = DefaultsValue.int(Int64(step))
                    try caches[side].setValue(value, forKey: key)
                    model[key] = value
                case 3:
                    try caches[side].removeValue(forKey: key)
                    model[key] = nil
                case 4:
                    let other = "k\(Int.random(in: 0..<6, using: &random))"
                    try caches[side].apply([.set(key, .int(Int64(-step))), .remove(other)])
                    model[key] = .int(Int64(-step))
                    model[other] = nil
                default:
                    if try caches[side].value(forKey: key) != model[key] { stale += 1 }
                }
            }
            #expect(stale == 0, "seed \(seed)")
            // The caches were used.
            #expect(caches.allSatisfy { $0.statistics.hits > 0 }, "seed \(seed)")
        }
    }

    /// The counter's registration holds the cache's state strongly; it must go with the cache
    /// while the provider and its counter live on, and the counter must stop calling it.
    @Test func releasingTheCacheReleasesItsStateAndItsRegistration() throws {
        try withTemporaryDirectory { directory in
            let storage = LoggedStorage()
            let provider = try LoggedProvider(storage: storage, counterFile: directory.path("counter"), likeFile: directory.path("store"))
            let writer = try LoggedProvider(storage: storage, counterFile: directory.path("counter"), likeFile: directory.path("store"))
            weak var state: AnyObject?
            do {
                let cache = provider.cached()
                state = cache.stateObject
                try cache.setValue(.int(1), forKey: "a")
                #expect(try cache.value(forKey: "a") == .int(1))
            }
            #expect(state == nil)
            try writer.setValue(.int(2), forKey: "a")
            let again = provider.cached()
            #expect(try again.value(forKey: "a") == .int(2))
        }
    }

    /// The same through `Defaults` and typed keys, whose reads take the cache's published
    /// answers without its lock: the commit count is checked on that path too.
    @Test func typedReadsInFrontOfTwoProcessesNeverReadAReplacedValue() throws {
        let seed = UInt64.random(in: 1...UInt64(UInt32.max))
        var random = SeededGenerator(seed: seed)
        let keys = (0..<6).map { DefaultsKey<Int>("k\($0)", default: -1) }
        try withTemporaryDirectory { directory in
            let storage = LoggedStorage()
            let first = try LoggedProvider(storage: storage, counterFile: directory.path("counter"), likeFile: directory.path("store"))
            let second = try LoggedProvider(storage: storage, counterFile: directory.path("counter"), likeFile: directory.path("store"))
            let stores = [Defaults(first), Defaults(second)]
            var model: [Int: Int] = [:]
            var stale = 0
            for step in 0..<4_000 {
                let key = Int.random(in: 0..<6, using: &random)
                let side = Int.random(in: 0..<2, using: &random)
                switch Int.random(in: 0..<10, using: &random) {
                case 0..<3:
                    stores[side][keys[key]] = step
                    model[key] = step
                case 3:
                    stores[side].reset(keys[key])
                    model[key] = nil
                default:
                    // Twice: the second read is the one a published answer serves.
                    if stores[side][keys[key]] != model[key] ?? -1 { stale += 1 }
                    if stores[side][keys[key]] != model[key] ?? -1 { stale += 1 }
                }
            }
            #expect(stale == 0, "seed \(seed)")
            #expect(stores.allSatisfy { ($0.statistics?.hits ?? 0) > 0 }, "seed \(seed)")
        }
    }

    @Test func aWriteTheCacheWouldSkipIsNotSkippedAfterAnotherProcessChangedTheKey() throws {
        try withTemporaryDirectory { directory in
            let storage = LoggedStorage()
            let mine = try LoggedProvider(storage: storage, counterFile: directory.path("counter"), likeFile: directory.path("store"))
            let other = try LoggedProvider(storage: storage, counterFile: directory.path("counter"), likeFile: directory.path("store"))
            let cache = mine.cached()
            try cache.setValue(.int(1), forKey: "k")
            try other.setValue(.int(2), forKey: "k")
            // The cache held 1: without the counter, it would skip this write as already stored.
            try cache.setValue(.int(1), forKey: "k")
            #expect(try other.value(forKey: "k") == .int(1))
        }
    }

    @Test func theCounterFileIsCreatedWithTheStoresModeAndCountsCommits() throws {
        try withTemporaryDirectory { directory in
            let store = directory.path("store")
            #expect(FileManager.default.createFile(atPath: store, contents: Data(), attributes: [.posixPermissions: 0o640]))
            let first = try SharedChangeCounter(file: directory.path("counter"), backend: "Test", likeFile: store)
            let second = try SharedChangeCounter(file: directory.path("counter"), backend: "Test", likeFile: store)
            var info = stat()
            #expect(lstat(directory.path("counter"), &info) == 0)
            #expect(info.st_mode & 0o777 == 0o640)
            #expect(info.st_size == 24)
            #expect(first.isCurrent && second.isCurrent)
            first.committed()
            #expect(first.isCurrent, "its own commit")
            #expect(!second.isCurrent, "another process's commit")
            let caughtUp = Atomic<Int>(0)
            second.onCatchUp {
                caughtUp.add(1, ordering: .relaxed)
                return true
            }
            second.synchronize()
            #expect(second.isCurrent)
            #expect(caughtUp.load(ordering: .relaxed) == 1)
            second.synchronize()  // current: no catch-up
            #expect(caughtUp.load(ordering: .relaxed) == 1)
            // No temporary file is left behind.
            #expect(try FileManager.default.contentsOfDirectory(atPath: directory.path).sorted() == ["counter", "store"])
        }
    }

    /// The store identity recorded in the counter file holds for that counter file only: a copy
    /// (moved or copied with the store) records nothing, so the files copied with it are taken as
    /// the store's own; in place, a recorded identity is replaced only from the expected one.
    @Test func theRecordedStoreIdentityBelongsToTheCounterFileThatRecordedIt() throws {
        try withTemporaryDirectory { directory in
            let counter = try SharedChangeCounter(file: directory.path("counter"), backend: "Test", likeFile: directory.path("store"))
            #expect(counter.storeIdentity == 0)
            #expect(counter.recordStoreIdentity(7, replacing: 0))
            #expect(counter.storeIdentity == 7)
            #expect(!counter.recordStoreIdentity(9, replacing: 8))
            #expect(counter.recordStoreIdentity(9, replacing: 7))
            let again = try SharedChangeCounter(file: directory.path("counter"), backend: "Test", likeFile: directory.path("store"))
            #expect(again.storeIdentity == 9)
            try FileManager.default.copyItem(atPath: directory.path("counter"), toPath: directory.path("copy"))
            let copy = try SharedChangeCounter(file: directory.path("copy"), backend: "Test", likeFile: directory.path("store"))
            #expect(copy.storeIdentity == 0)
            #expect(copy.recordStoreIdentity(11, replacing: 0))
            #expect(copy.storeIdentity == 11)
            #expect(counter.storeIdentity == 9)
        }
    }

    @Test func aLinkOrAFileOfAnotherKindWhereTheCounterBelongsIsRefused() throws {
        try withTemporaryDirectory { directory in
            let victim = directory.path("victim")
            #expect(FileManager.default.createFile(atPath: victim, contents: Data("keep".utf8)))
            #expect(symlink(victim, directory.path("link")) == 0)
            #expect(throws: DefaultsError.self) {
                try SharedChangeCounter(file: directory.path("link"), backend: "Test", likeFile: directory.path("store"))
            }
            #expect(symlink(directory.path("missing"), directory.path("dangling")) == 0)
            #expect(throws: DefaultsError.self) {
                try SharedChangeCounter(file: directory.path("dangling"), backend: "Test", likeFile: directory.path("store"))
            }
            #expect(!FileManager.default.fileExists(atPath: directory.path("missing")))
            #expect(mkfifo(directory.path("fifo"), 0o600) == 0)
            #expect(throws: DefaultsError.self) {
                try SharedChangeCounter(file: directory.path("fifo"), backend: "Test", likeFile: directory.path("store"))
            }
            let kept = try String(contentsOfFile: victim, encoding: .utf8)
            #expect(kept == "keep")
        }
    }

    /// Where the counter file cannot be created (here: its directory is missing; also a
    /// read-only directory, a full disk), every check finds the count moved, so every cached read
    /// catches up: slower, never stale.
    @Test func withoutACounterFileEveryCheckCatchesUp() throws {
        try withTemporaryDirectory { directory in
            let counter = try SharedChangeCounter(
                file: directory.path("missing/counter"), backend: "Test", likeFile: directory.path("missing/store"))
            #expect(!counter.isCurrent)
            let caughtUp = Atomic<Int>(0)
            counter.onCatchUp {
                caughtUp.add(1, ordering: .relaxed)
                return true
            }
            counter.synchronize()
            counter.synchronize()
            #expect(caughtUp.load(ordering: .relaxed) == 2)
            #expect(!counter.isCurrent)
        }
    }
}

/// Storage shared by the "processes" of a test: values, and a log of which key each commit
/// changed.
final class LoggedStorage: Sendable {
    struct State {
        var values: [String: DefaultsValue] = [:]
        var log: [String] = []
    }

    let state = Mutex(State())
}

/// A provider on a ``LoggedStorage``, as one process: it counts its commits in a counter file,
/// and catches up by reading the log after its position (its own commits included, which is
/// harmless). It sends no events.
final class LoggedProvider: DefaultsProvider {
    let storage: LoggedStorage
    let counter: SharedChangeCounter
    private let position = Mutex(0)

    init(storage: LoggedStorage, counterFile: String, likeFile: String) throws {
        self.storage = storage
        counter = try SharedChangeCounter(file: counterFile, backend: "Test", likeFile: likeFile)
        counter.onCatchUp { [weak self] in
            guard let self else { return false }
            position.withLock { position in
                let keys = storage.state.withLock { state in
                    defer { position = state.log.count }
                    return Array(state.log[position...])
                }
                counter.invalidate(keys)
            }
            return true
        }
    }

    var capabilities: DefaultsCapabilities { [.persistent, .atomicBatch, .multiProcess] }
    var sharedChangeCounter: SharedChangeCounter? { counter }

    func value(forKey key: String) throws(DefaultsError) -> DefaultsValue? {
        storage.state.withLock { $0.values[key] }
    }

    func keys() throws(DefaultsError) -> [String] {
        storage.state.withLock { Array($0.values.keys) }
    }

    func apply(_ changes: [DefaultsChange]) throws(DefaultsError) {
        storage.state.withLock { state in
            for change in changes {
                state.values[change.key] = change.value
                state.log.append(change.key)
            }
        }
        counter.committed()
    }

    func observe(_ handler: @escaping @Sendable (DefaultsChangeEvent) -> Void) -> DefaultsObservation {
        DefaultsObservation {}
    }
}
