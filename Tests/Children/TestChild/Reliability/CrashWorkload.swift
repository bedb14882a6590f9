import AnyDefaults
import Foundation
import TestSupport

/// The writes of the crash test: a deterministic sequence of operations, numbered by generation,
/// whose values can be recomputed from their key and generation, so that a checker in another
/// process can tell a committed value from a torn or stale one without any record of the writer.
enum CrashWorkload {
    /// The keys the writer touches: plain ones, a Unicode one and one of 1 200 bytes.
    static let keys: [String] = (0..<20).map { "key-" + String($0 / 10) + String($0 % 10) }
        + ["ключ-🔑", String(repeating: "long", count: 300)]

    /// One operation: a single `setValue` / `removeValue`, or one `apply` of several changes on
    /// distinct keys.
    struct Operation {
        var changes: [(key: String, isRemoval: Bool)]
        var isBatch: Bool
    }

    /// The operation of `generation` for the run seeded with `seed`.
    static func operation(seed: UInt64, generation: Int64) -> Operation {
        var random = SeededGenerator(seed: seed ^ UInt64(bitPattern: generation) &* 0x9E37_79B9_7F4A_7C15)
        let kind = random.next() % 10
        if kind < 6 {
            // A single write; one in six of them a removal.
            let key = keys[Int(random.next() % UInt64(keys.count))]
            return Operation(changes: [(key, kind == 0)], isBatch: false)
        }
        var pool = keys
        let count = 2 + Int(random.next() % 5)
        var changes: [(key: String, isRemoval: Bool)] = []
        for _ in 0..<count {
            let key = pool.remove(at: Int(random.next() % UInt64(pool.count)))
            changes.append((key, random.next() % 8 == 0))
        }
        return Operation(changes: changes, isBatch: true)
    }

    /// The value that `generation` writes under `key`: its generation, its key, and a payload of
    /// 0 to 4 KiB (one in sixteen 64 to 256 KiB, so that writes take long enough to be cut).
    static func value(key: String, generation: Int64) -> DefaultsValue {
        var random = SeededGenerator(seed: fnv1a(key) ^ UInt64(bitPattern: generation))
        let large = random.next() % 16 == 0
        let size = Int(random.next() % (large ? 196_608 : 4_096)) + (large ? 65_536 : 0)
        var bytes = [UInt8](repeating: 0, count: size)
        var index = 0
        while index < size {
            var word = random.next()
            for _ in 0..<8 where index < size {
                bytes[index] = UInt8(truncatingIfNeeded: word)
                word >>= 8
                index += 1
            }
        }
        let uniform = Int(random.next() % 32)
        return .dictionary([
            "generation": .int(generation),
            "key": .string(key),
            "payload": .data(Data(bytes)),
            "uniform": .array(Array(repeating: .double(Double(generation) + 0.5), count: uniform)),
        ])
    }

    /// The generation a stored value claims to come from, if it has the shape of a workload value.
    static func generation(of value: DefaultsValue) -> Int64? {
        guard case .dictionary(let fields) = value, case .int(let generation)? = fields["generation"] else { return nil }
        return generation
    }

    /// A stable string hash (Swift's `Hasher` is seeded per process).
    static func fnv1a(_ text: String) -> UInt64 {
        var hash: UInt64 = 0xCBF2_9CE4_8422_2325
        for byte in text.utf8 {
            hash = (hash ^ UInt64(byte)) &* 0x0000_0100_0000_01B3
        }
        return hash
    }
}
