import AnyDefaultsCore

/// The keys of the stores used to measure how reads scale with the number of keys.
public enum ScaleKeys {
    /// The `index`th key, `settings.group<index % 64>.key<index>`: 21 to 26 bytes, longer than
    /// the 15 bytes a Swift string holds without a heap allocation, as most real keys are.
    public static func name(_ index: Int) -> String {
        "settings.group\(index % 64).key\(index)"
    }

    /// The changes that fill a store with `count` keys, each holding its index as an int.
    public static func changes(count: Int) -> [DefaultsChange] {
        (0..<count).map { .set(name($0), .int(Int64($0))) }
    }

    /// The changes that fill a store with `count` keys holding a mix of ints, booleans, doubles
    /// and strings of 14 to 18 bytes, in equal parts.
    public static func mixedChanges(count: Int) -> [DefaultsChange] {
        (0..<count).map { index in
            let value: DefaultsValue =
                switch index % 4 {
                case 0: .int(Int64(index))
                case 1: .bool(index % 8 == 1)
                case 2: .double(Double(index) / 8)
                default: .string("value number \(index)")
                }
            return .set(name(index), value)
        }
    }

    /// `sampleSize` keys of a store of `count` keys, drawn uniformly at random (the same ones on
    /// every run), so that reads walk the whole store instead of one warm path.
    public static func sample(of count: Int, size sampleSize: Int = 16_384) -> [String] {
        var generator = SplitMix64(seed: UInt64(count))
        return (0..<sampleSize).map { _ in name(Int(generator.next() % UInt64(count))) }
    }
}

/// A small deterministic random number generator (SplitMix64), so that every run reads the same keys.
public struct SplitMix64: RandomNumberGenerator {
    private var state: UInt64

    public init(seed: UInt64) {
        state = seed
    }

    public mutating func next() -> UInt64 {
        state &+= 0x9E37_79B9_7F4A_7C15
        var mixed = state
        mixed = (mixed ^ (mixed >> 30)) &* 0xBF58_476D_1CE4_E5B9
        mixed = (mixed ^ (mixed >> 27)) &* 0x94D0_49BB_1331_11EB
        return mixed ^ (mixed >> 31)
    }
}
