import AnyDefaults
import Foundation
import Testing
import TestSupport

/// Read-your-writes across processes through a cache: another, real process
/// (`TestChild serve`) writes a key and says so once its write returned; this
/// process then reads the key through its cache, which held the previous value. The read must
/// return the new value, every time.
///
/// `ANYDEFAULTS_COHERENCE_TRIES` sets the number of writes per backend (default 500).
@Suite(.ownThreads) struct CrossProcessCoherenceTests {
    static let tries = ProcessInfo.processInfo.environment["ANYDEFAULTS_COHERENCE_TRIES"].flatMap { Int($0) } ?? 500

    /// SQLite and LMDB offer a shared change counter: a cached read is never stale.
    @Test(arguments: Backend.all.filter { ["SQLite", "LMDB"].contains($0.name) })
    func aCachedReadAfterAnotherProcessesWriteReturnedIsNeverStale(_ backend: Backend) throws {
        try withStoreLocation(backend) { configuration, _ in
            let plain = try backend.open(configuration, cached: false)
            defer { plain.close() }
            #expect(plain.provider.sharedChangeCounter != nil)
            let result = try Self.measure(plain.provider, configuration: configuration, tries: Self.tries, read: .cached)
            print("\(backend.name): \(result.stale) stale of \(Self.tries) cached reads after another process's write; \(result.hits) hits")
            #expect(result.stale == 0)
            // The reads before each write were answered from memory: the cache is in use. Not
            // all of them: this process's watcher learns of each child write too, a moment later,
            // and forgets the key again if that lands after the read that already fetched it (on a
            // loaded machine, for about half of them).
            #expect(result.hits > 0)
        }
    }

    /// Without the counter (as before it existed, and for backends without one) the same reads
    /// are stale for a moment; `freshValue(forKey:)` never is, on every backend.
    @Test(arguments: Backend.all)
    func aFreshReadIsNeverStaleAndACachedOneWithoutTheCounterCanBe(_ backend: Backend) throws {
        try withStoreLocation(backend) { configuration, _ in
            let plain = try backend.open(configuration, cached: false)
            defer { plain.close() }
            let tries = max(Self.tries / 5, 20)
            let fresh = try Self.measure(plain.provider, configuration: configuration, tries: tries, read: .fresh)
            #expect(fresh.stale == 0, "\(backend.name): \(fresh.stale) stale of \(tries) fresh reads")
            let uncounted = try Self.measure(plain.provider, configuration: configuration, tries: tries, read: .cachedWithoutCounter)
            print("\(backend.name): \(uncounted.stale) stale of \(tries) cached reads without the counter; 0 fresh")
        }
    }

    enum Read { case cached, fresh, cachedWithoutCounter }

    /// Drives the child through `tries` writes of the key `k` and counts the reads here that
    /// returned a value other than the one just written.
    static func measure(
        _ provider: any DefaultsProvider, configuration: String, tries: Int, read: Read
    ) throws -> (stale: Int, hits: Int) {
        switch read {
        case .cached, .fresh: try measure(opened: provider, configuration: configuration, tries: tries, fresh: read == .fresh)
        case .cachedWithoutCounter:
            try measure(WithoutCounter(upstream: provider).cached(), configuration: configuration, tries: tries, fresh: false)
        }
    }

    private static func measure<Upstream: DefaultsProvider>(
        opened provider: Upstream, configuration: String, tries: Int, fresh: Bool
    ) throws -> (stale: Int, hits: Int) {
        try measure(provider.cached(), configuration: configuration, tries: tries, fresh: fresh)
    }

    static func measure<Upstream>(
        _ cache: CachingProvider<Upstream>, configuration: String, tries: Int, fresh: Bool
    ) throws -> (stale: Int, hits: Int) {
        let (child, input, output) = try ChildProcess.startConversation("TestChild", ["serve", configuration])
        defer {
            try? input.close()
            child.waitUntilExit()
        }
        #expect(try output.readLine() == "ready")
        let base = Int64.random(in: 1...1_000_000) * 1_000_000
        try cache.setValue(.int(base), forKey: "k")
        var stale = 0
        for index in 1...Int64(tries) {
            #expect(try cache.value(forKey: "k") == .int(base + index - 1))
            try input.write(contentsOf: Data("k=\(base + index)\n".utf8))
            #expect(try output.readLine() == "ok")
            let value = fresh ? try cache.freshValue(forKey: "k") : try cache.value(forKey: "k")
            if value != .int(base + index) {
                stale += 1
                // Wait until it arrives, so that the next round starts from the new value.
                _ = try waitUntil { try cache.value(forKey: "k") == .int(base + index) }
            }
        }
        return (stale, cache.statistics.hits)
    }
}

/// A provider that forwards everything to `upstream` but hides its shared change counter.
struct WithoutCounter: DefaultsProvider {
    let upstream: any DefaultsProvider
    var capabilities: DefaultsCapabilities { upstream.capabilities }
    func value(forKey key: String) throws(DefaultsError) -> DefaultsValue? { try upstream.value(forKey: key) }
    func keys() throws(DefaultsError) -> [String] { try upstream.keys() }
    func apply(_ changes: [DefaultsChange]) throws(DefaultsError) { try upstream.apply(changes) }
    func observe(_ handler: @escaping @Sendable (DefaultsChangeEvent) -> Void) -> DefaultsObservation {
        upstream.observe(handler)
    }
}
