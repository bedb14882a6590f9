@testable import AnyDefaultsLMDB
import AnyDefaultsCore
import Foundation
import Testing
import TestSupport

@Suite struct LMDBLongKeyTests {
    /// Keys around and far beyond LMDB's 511-byte limit, some with multi-byte characters across the
    /// 256-byte prefix of derived keys, and some sharing that prefix.
    static let keys: [String] = {
        let shared = String(repeating: "p", count: 300)
        return [
            String(repeating: "a", count: 511),
            String(repeating: "a", count: 512),
            String(repeating: "b", count: 1024),
            String(repeating: "é", count: 700),
            String(repeating: "x", count: 255) + "👩‍👩‍👧‍👦" + String(repeating: "y", count: 600),
            shared + "1" + String(repeating: "z", count: 300),
            shared + "2" + String(repeating: "z", count: 300),
            shared + "3",
            String(repeating: "long key ", count: 12_000),
        ]
    }()

    @Test func longKeysStoreReadListAndRemove() throws {
        try withTemporaryDirectory { directory in
            let path = directory.path("store")
            do {
                let store = try LMDBProvider(path: path)
                for (index, key) in Self.keys.enumerated() { try store.setValue(.int(Int64(index)), forKey: key) }
                try store.setValue(.string("short"), forKey: "short")
                for (index, key) in Self.keys.enumerated() { #expect(try store.value(forKey: key) == .int(Int64(index))) }
                #expect(try store.value(forKey: String(repeating: "a", count: 513)) == nil)
                #expect(Set(try store.keys()) == Set(Self.keys + ["short"]))
            }
            let store = try LMDBProvider(path: path)
            #expect(Set(try store.keys()) == Set(Self.keys + ["short"]))
            try store.removeValue(forKey: Self.keys[6])
            try store.removeValue(forKey: Self.keys[6])
            #expect(try store.value(forKey: Self.keys[6]) == nil)
            #expect(try store.value(forKey: Self.keys[5]) == .int(5))
            #expect(try store.allValues()[Self.keys[8]] == .int(8))
            // keys() gives back the keys exactly, scalar for scalar.
            let listed = try store.keys()
            for key in Self.keys where key != Self.keys[6] {
                #expect(listed.contains { Array($0.unicodeScalars) == Array(key.unicodeScalars) })
            }
        }
    }

    @Test func colidingLongKeysShareABucketAndStayDistinct() throws {
        try withTemporaryDirectory { directory in
            // Every long key hashes alike, so keys with one 256-byte prefix share one record.
            let scheme = LMDBKeyScheme(fixedHash: 42)
            let store = try LMDBProvider(path: directory.path("store"), options: .init(), scheme: scheme)
            let prefix = String(repeating: "q", count: 600)
            let keys = (0..<5).map { prefix + "\($0)" }
            let log = Recorder<DefaultsChangeEvent>()
            let observation = store.observe(log.record)
            for (index, key) in keys.enumerated() { try store.setValue(.int(Int64(index)), forKey: key) }
            try store.setValue(.int(2), forKey: keys[2])  // unchanged: no event
            for (index, key) in keys.enumerated() { #expect(try store.value(forKey: key) == .int(Int64(index))) }
            try store.removeValue(forKey: keys[1])
            #expect(try store.value(forKey: keys[1]) == nil)
            #expect(Set(try store.keys()) == Set(keys.filter { $0 != keys[1] }))
            try store.apply(keys.map { .remove($0) })
            #expect(try store.keys().isEmpty)
            #expect(log.all.count == 5 + 1 + 4)
            observation.cancel()
        }
    }

    @Test func bucketDecodingRejectsDamage() throws {
        let scheme = LMDBKeyScheme.standard
        let key = String(repeating: "k", count: 600)
        let derived = Array(key.utf8).withUnsafeBytes { scheme.derivedKey($0) }
        let bucket = LMDBLongKeyBucket(entries: [(key, LMDBValueCodec.encode(.int(1)))])
        let bytes = bucket.encoded()
        func decode(_ bytes: [UInt8], derived: [UInt8] = derived) throws -> LMDBLongKeyBucket {
            try bytes.withUnsafeBytes { bytes in
                try derived.withUnsafeBytes { try LMDBLongKeyBucket.decode(bytes, derivedKey: $0, scheme: scheme) }
            }
        }
        #expect(try decode(bytes) == bucket)
        // A bucket under another derived key does not hold this key.
        #expect(throws: BinaryCodecError.self) { try decode(bytes, derived: derived.dropLast() + [0]) }
        #expect(throws: BinaryCodecError.self) { try decode([1, 0]) }
        #expect(throws: BinaryCodecError.self) { try decode(Array(bytes.dropLast())) }
        #expect(throws: BinaryCodecError.self) { try decode(bytes + [0]) }
        let twice = LMDBLongKeyBucket(entries: [(key, [1, 1]), (key, [1, 0])]).encoded()
        #expect(throws: BinaryCodecError.self) { try decode(twice) }
        var generator = SeededGenerator(state: 7)
        for _ in 0..<5_000 {
            var damaged = bytes
            damaged[Int.random(in: 0..<damaged.count, using: &generator)] = UInt8.random(in: 0...255, using: &generator)
            _ = try? decode(damaged)
        }
    }
}
