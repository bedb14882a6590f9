import AnyDefaultsCore
import Synchronization
import Testing

/// A move removes nothing from its source before its destination made the copy durable
/// (`makeDurable()`): a destination that syncs lazily (SQLite's NORMAL, LMDB without sync) could
/// otherwise lose the copy in a power loss after the source's removal, and the keys would be in
/// neither store. A cache in front passes the call on.
@Suite struct MoveDurabilityTests {
    static let persistent: DefaultsCapabilities = [.persistent, .atomicBatch]

    /// What the destination had done when the source first removed something: its batches and
    /// its calls of `makeDurable()`.
    final class Seen: Sendable {
        let counts = Mutex<(writes: Int, durable: Int)?>(nil)
        var value: (writes: Int, durable: Int)? { counts.withLock { $0 } }

        init(_ source: SpyProvider, _ destination: SpyProvider) {
            source.beforeCommit { [weak self] changes in
                guard let self, changes.contains(where: { $0.value == nil }) else { return }
                let seen = destination.counts
                counts.withLock { $0 = $0 ?? (seen.writes, seen.madeDurable) }
            }
        }
    }

    @Test(arguments: [false, true])
    func aStoreMoveMakesTheCopyDurableBeforeRemovingTheSource(cachedDestination: Bool) throws {
        let source = SpyProvider(["a": .int(1), "b": .int(2)], capabilities: Self.persistent)
        let destination = SpyProvider(capabilities: Self.persistent)
        let seen = Seen(source, destination)
        let moved = try source.moveAll(to: cachedDestination ? destination.cached() as any DefaultsProvider : destination)
        #expect(moved.removed == ["a", "b"])
        let before = try #require(seen.value)
        #expect(before.writes == 1 && before.durable == 1)
        // A copy makes nothing durable: nothing is removed.
        _ = try SpyProvider(["c": .int(3)], capabilities: Self.persistent).copyAll(to: destination)
        #expect(destination.counts.madeDurable == 1)
    }

    @Test func aKeyMovedToAnotherStoreIsDurableThereBeforeItIsRemovedHere() throws {
        let source = SpyProvider(["old": .int(4)], capabilities: Self.persistent)
        let destination = SpyProvider(capabilities: Self.persistent)
        let seen = Seen(source, destination)
        let old = DefaultsKey<Int>("old", default: 0)
        let new = DefaultsKey<Int>("new", default: 0)
        #expect(try Defaults(source).throwing.migrate(old, to: new, in: Defaults(destination)) { $0 + 1 })
        #expect(destination.stored("new") == .int(5) && source.stored("old") == nil)
        let before = try #require(seen.value)
        #expect(before.writes == 1 && before.durable == 1)
    }
}
