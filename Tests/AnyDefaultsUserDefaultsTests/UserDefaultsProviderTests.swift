import AnyDefaultsCore
import AnyDefaultsUserDefaults
import Foundation
import Testing
import TestSupport

/// The provider on its own: round trips, keys, batches, instances and events.
@Suite struct UserDefaultsProviderTests {
    @Test func everySampleRoundTripsThroughANewInstance() throws {
        try withTestSuite { suite in
            try suite.provider().apply(Samples.values.map { .set($0.key, $0.value) })
            // A fresh store reads the file again: the first provider and its store are gone.
            let reopened = try suite.provider()
            #expect(try reopened.allValues() == Samples.values)
            for (key, value) in Samples.values {
                #expect(try reopened.value(forKey: key) == value, "\(key)")
            }
            #expect(try Set(reopened.keys()) == Set(Samples.values.keys))
        }
    }

    @Test func typeChangesAreStoredNotSkipped() throws {
        try withTestSuite { suite in
            let store = try suite.provider()
            for value: DefaultsValue in [.int(1), .double(1), .bool(true), .int(1), .double(0), .double(-0.0), .int(0)] {
                try store.setValue(value, forKey: "k")
                #expect(try store.value(forKey: "k") == value)
                #expect(try suite.provider().value(forKey: "k") == value)
            }
        }
    }

    @Test func largeDataRoundTrips() throws {
        try withTestSuite { suite in
            var large = Data(count: 1 << 20)
            large.withUnsafeMutableBytes { bytes in
                for index in stride(from: 0, to: bytes.count, by: 4093) { bytes[index] = UInt8(truncatingIfNeeded: index) }
            }
            try suite.provider().setValue(.data(large), forKey: "large")
            #expect(try suite.provider().value(forKey: "large") == .data(large))
        }
    }

    @Test func theDeepestNestingRoundTrips() throws {
        try withTestSuite { suite in
            var deep: DefaultsValue = .array([])
            for level in 1..<DefaultsValue.maximumNestingDepth {
                deep = level.isMultiple(of: 2) ? .array([deep]) : .dictionary(["d": deep])
            }
            #expect(deep.nestingDepth == DefaultsValue.maximumNestingDepth)
            try suite.provider().setValue(deep, forKey: "deep")
            #expect(try suite.provider().value(forKey: "deep") == deep)
        }
    }

    @Test func canonicallyEquivalentKeysAreOneKey() throws {
        try withTestSuite { suite in
            let store = try suite.provider()
            try store.setValue(.int(1), forKey: "caf\u{E9}")
            try store.setValue(.int(2), forKey: "cafe\u{301}")
            #expect(try store.keys() == ["caf\u{E9}"])
            #expect(try store.value(forKey: "caf\u{E9}") == .int(2))
        }
    }

    @Test func invalidInputIsRejectedBeforeAnythingIsWritten() throws {
        try withTestSuite { suite in
            let store = try suite.provider()
            try store.setValue(.int(1), forKey: "kept")
            var tooDeep: DefaultsValue = .array([])
            for _ in 0..<DefaultsValue.maximumNestingDepth { tooDeep = .array([tooDeep]) }
            let deepError = #expect(throws: DefaultsError.self) {
                try store.apply([.set("a", .int(1)), .set("deep", tooDeep)])
            }
            #expect(deepError?.code == .invalidValue)
            #expect(deepError?.key == "deep")
            let keyError = #expect(throws: DefaultsError.self) { try store.apply([.set("b", .int(1)), .remove("")]) }
            #expect(keyError?.code == .invalidKey)
            #expect(try store.allValues() == ["kept": .int(1)])
        }
    }

    @Test func removalsAndRemoveAll() throws {
        try withTestSuite { suite in
            let store = try suite.provider()
            try store.apply([.set("a", .int(1)), .set("b", .int(2)), .remove("a"), .remove("absent")])
            #expect(try store.allValues() == ["b": .int(2)])
            try store.removeValue(forKey: "absent")
            try store.removeAll()
            #expect(try store.keys().isEmpty)
            // An empty suite has no file, as with Foundation.
            if let url = suite.fileURL { #expect(!FileManager.default.fileExists(atPath: url.path)) }
            #expect(try suite.provider().keys().isEmpty)
        }
    }

    @Test func aSecondInstanceSeesWritesAtOnceAndHearsThemAsExternal() throws {
        try withTestSuite { suite in
            let first = try suite.provider()
            let second = try suite.provider()
            let firstLog = Recorder<DefaultsChangeEvent>()
            let secondLog = Recorder<DefaultsChangeEvent>()
            let firstObservation = first.observe { firstLog.record($0) }
            let secondObservation = second.observe { secondLog.record($0) }
            defer { firstObservation.cancel(); secondObservation.cancel() }

            try first.setValue(.string("dark"), forKey: "theme")
            #expect(try second.value(forKey: "theme") == .string("dark"))
            try second.removeValue(forKey: "theme")
            #expect(try first.value(forKey: "theme") == nil)

            #expect(firstLog.all == [
                DefaultsChangeEvent(key: "theme", newValue: .string("dark"), origin: .local),
                DefaultsChangeEvent(key: "theme", newValue: nil, origin: .external),
            ])
            #expect(secondLog.all == [
                DefaultsChangeEvent(key: "theme", newValue: .string("dark"), origin: .external),
                DefaultsChangeEvent(key: "theme", newValue: nil, origin: .local),
            ])
        }
    }

    @Test func writingTheStoredValueEmitsNothingAndWritesNothing() throws {
        try withTestSuite { suite in
            let store = try suite.provider()
            try store.apply([.set("n", .double(.nan)), .set("z", .double(-0.0)), .set("list", .array([.int(1)]))])
            let log = EventLog(store)
            let before = try suite.fileURL.map { try FileManager.default.attributesOfItem(atPath: $0.path) }

            try store.apply([.set("n", .double(-.nan)), .set("z", .double(-0.0)), .set("list", .array([.int(1)]))])
            try store.removeValue(forKey: "absent")
            #expect(log.all.isEmpty)
            let after = try suite.fileURL.map { try FileManager.default.attributesOfItem(atPath: $0.path) }
            #expect(before?[.systemFileNumber] as? Int == after?[.systemFileNumber] as? Int)

            try store.setValue(.double(0), forKey: "z")
            #expect(log.all == [DefaultsChangeEvent(key: "z", newValue: .double(0), origin: .local)])
        }
    }

    @Test func manyThreadsOnTwoInstancesLoseNoUpdate() async throws {
        let suite = TestSuite()
        defer { suite.remove() }
        let stores = [try suite.provider(), try suite.provider()]
        try await withThrowingTaskGroup(of: Void.self) { group in
            for worker in 0..<4 {
                group.addTask {
                    let store = stores[worker % 2]
                    for index in 0..<6 {
                        try store.setValue(.int(Int64(index)), forKey: "w\(worker)-\(index)")
                        _ = try store.value(forKey: "w\((worker + 1) % 4)-\(index)")
                    }
                }
            }
            try await group.waitForAll()
        }
        #expect(try stores[0].keys().count == 24)
        #expect(try suite.provider().allValues() == stores[1].allValues())
    }

    @Test func suiteNamesFoundationCannotUseAreRejected() {
        for name in ["", "NSGlobalDomain", "NSArgumentDomain", ".GlobalPreferences", "a/b", "..", "nul\0", String(repeating: "x", count: 250)] {
            let error = #expect(throws: DefaultsError.self, "\(name.debugDescription)") {
                try UserDefaultsProvider(suiteName: name)
            }
            #expect(error?.code == .invalidConfiguration)
            #expect(error?.backend == "UserDefaults")
        }
    }

    @Test func capabilitiesArePlatformHonest() throws {
        try withTestSuite { suite in
            let store = try suite.provider()
            #if canImport(Darwin)
            #expect(store.capabilities == [.persistent, .multiProcess])
            #else
            #expect(store.capabilities == [.persistent, .atomicBatch, .multiProcess, .externalChanges])
            #endif
        }
    }
}
