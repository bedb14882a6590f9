import AnyDefaultsCore
import Foundation

/// Generates keys and values from a seed: the same seed, the same inputs, in any process.
struct ConformanceGenerator {
    var random: ConformanceRandom

    init(seed: UInt64, stream: String) {
        random = ConformanceRandom(seed: seed, stream: stream)
    }

    /// Pieces keys and strings are made of: ASCII, separators and wildcards, escapes, white
    /// space and controls, accents (composed and combining), other scripts, emoji, and
    /// compatibility characters.
    static let pieces: [String] = [
        "a", "b", "Z", "0", "9", ".", "/", "\\", "%", "_", "*", "?", "[", "]", "'", "\"", "-", ":", "$", "{", "}",
        "%2F", "%25", "&amp;", "\\u0041", "+", " ", "\t", "\n", "\u{0}", "\u{7F}", "\u{E9}", "e\u{301}", "\u{301}", "\u{C5}",
        "\u{212B}", "\u{FB01}", "\u{FF21}", "\u{B2}", "\u{130}", "\u{131}", "\u{DF}", "\u{3A3}", "\u{3C2}", "ключ", "キー", "設定",
        "مفتاح", "\u{5D0}", "🔑", "👩‍👩‍👧", "🏳️‍🌈", "\u{FEFF}", "\u{200B}", "\u{A0}", "\u{2028}", "\u{10FFFF}", "\u{1100}\u{1161}",
    ]

    /// A key of 1 to `maximumPieces` pieces (never empty).
    mutating func key(maximumPieces: Int = 6) -> String {
        let count = Int.random(in: 1...maximumPieces, using: &random)
        return (0..<count).map { _ in random.pick(Self.pieces) }.joined()
    }

    /// A string of up to `maximumPieces` pieces (may be empty).
    mutating func string(maximumPieces: Int = 8) -> String {
        let count = Int.random(in: 0...maximumPieces, using: &random)
        return (0..<count).map { _ in random.pick(Self.pieces) }.joined()
    }

    /// A double: extremes, negative zero, subnormals, values needing 17 digits, or random bits.
    mutating func double() -> Double {
        switch Int.random(in: 0..<10, using: &random) {
        case 0: return random.pick([0.0, -0.0, .infinity, -.infinity, .nan, .leastNonzeroMagnitude, -.leastNormalMagnitude, .greatestFiniteMagnitude])
        case 1: return random.pick(ConformanceValues.seventeenDigitDoubles)
        case 2, 3:
            // Random bits: every exponent and mantissa, NaNs included.
            return Double(bitPattern: random.next())
        default: return Double.random(in: -1e6...1e6, using: &random)
        }
    }

    /// A random value, nested up to `depth` levels.
    mutating func value(depth: Int = 3) -> DefaultsValue {
        let kind = Int.random(in: 0..<(depth > 0 ? 10 : 8), using: &random)
        switch kind {
        case 0: return .bool(random.chance(0.5))
        case 1:
            return .int(random.chance(0.3) ? random.pick([.min, .max, 0, -1, 1 << 53 + 1, Int64(Int32.min) - 1]) : Int64(bitPattern: random.next()))
        case 2, 3: return .double(double())
        case 4, 5: return .string(string())
        case 6: return .data(Data((0..<Int.random(in: 0...40, using: &random)).map { _ in UInt8.random(in: 0...255, using: &random) }))
        case 7: return .date(Date(timeIntervalSinceReferenceDate: double()))
        case 8: return .array((0..<Int.random(in: 0...5, using: &random)).map { _ in value(depth: depth - 1) })
        default:
            var entries: [String: DefaultsValue] = [:]
            for _ in 0..<Int.random(in: 0...5, using: &random) {
                // Dictionary keys may be empty and may look like tags.
                let key = random.chance(0.2) ? random.pick(["", "$data", "$date", "$dict", "CF$UID"]) : string(maximumPieces: 3)
                entries[key] = value(depth: depth - 1)
            }
            return .dictionary(entries)
        }
    }
}
