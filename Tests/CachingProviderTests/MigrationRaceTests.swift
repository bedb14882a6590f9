import AnyDefaultsCore
import Synchronization
import Testing

/// A move within one store never removes a value another writer stored in the source after it
/// was read: the move is conditional, and the newer value is moved in its turn.
@Suite struct MigrationRaceTests {
    static let old = DefaultsKey<Int>("old", default: 0)
    static let new = DefaultsKey<Int>("new", default: 0)

    /// Another writer stores `2` in the source between the migration's read of `1` and its batch.
    @Test(arguments: [true, false])
    func aValueWrittenToTheSourceDuringTheMoveIsMovedNotLost(cached: Bool) throws {
        let spy = SpyProvider(["old": .int(1)])
        let interfered = Mutex(false)
        spy.onRead { key, value in
            guard key == "old", value == .int(1), !interfered.withLock({ $0 }) else { return }
            interfered.withLock { $0 = true }
            spy.silentWrite("old", .int(2))
        }
        let defaults = Defaults(spy, cached: cached)
        #expect(try defaults.throwing.migrate(Self.old, to: Self.new) { $0 * 10 })
        #expect(interfered.withLock { $0 })
        #expect(spy.stored("new") == .int(20))
        #expect(spy.stored("old") == nil)
    }

    /// A writer that changes the source before every batch: the move gives up with `busy` after
    /// its attempts, leaving the source and the target as they were.
    @Test func aSourceThatNeverStaysStillIsLeftInPlace() throws {
        let spy = SpyProvider(["old": .int(1)])
        let next = Mutex(Int64(1))
        spy.onRead { key, _ in
            guard key == "old" else { return }
            spy.silentWrite("old", .int(next.withLock { $0 += 1; return $0 }))
        }
        let defaults = Defaults(spy, cached: false)
        let error = #expect(throws: DefaultsError.self) { try defaults.throwing.migrate(Self.old, to: Self.new) { $0 } }
        #expect(error?.code == .busy)
        #expect(spy.stored("new") == nil)
        #expect(spy.stored("old") != nil)
    }
}
