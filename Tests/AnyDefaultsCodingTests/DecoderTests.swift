import AnyDefaultsCore
import Foundation
import Testing

@Suite struct DecoderTests {
    /// Decodes `value` as `T`, expecting a failure, and returns the error.
    func failure<T: Decodable>(_ type: T.Type, _ value: DefaultsValue, key: String? = nil) -> DefaultsError? {
        do {
            _ = try DefaultsDecoder().decode(T.self, from: value, forKey: key)
            Issue.record("decoded \(T.self) from a mismatched value")
            return nil
        } catch {
            return error
        }
    }

    @Test func errorNamesKeyAndPathInsideTheValue() throws {
        struct Root: Codable { var window: Window }
        var tree = try DefaultsEncoder().encode(Root(window: Window(title: "t", frame: [
            Frame(x: 0, y: 0, width: 1, height: 1), Frame(x: 0, y: 0, width: 1, height: 1), Frame(x: 0, y: 0, width: 1, height: 1),
        ], zoom: nil)))
        // Damage settings.window.frame[2].width: a string where a number belongs.
        guard case .dictionary(var root) = tree, case .dictionary(var window)? = root["window"],
              case .array(var frames)? = window["frame"], case .dictionary(var frame) = frames[2]
        else { Issue.record("unexpected shape"); return }
        frame["width"] = .string("secret-token-123")
        frames[2] = .dictionary(frame)
        window["frame"] = .array(frames)
        root["window"] = .dictionary(window)
        tree = .dictionary(root)

        let error = try #require(failure(Root.self, tree, key: "settings"))
        #expect(error.code == .decodingFailed)
        #expect(error.key == "settings")
        #expect(error.message == "Cannot decode Root at settings.window.frame[2].width: Expected Double, found a string.")
        #expect(!error.description.contains("secret-token-123"))
        guard case .typeMismatch(_, let context)? = error.cause as? DecodingError else {
            Issue.record("cause is not a DecodingError.typeMismatch"); return
        }
        #expect(context.codingPath.map(\.stringValue) == ["window", "frame", "Index 2", "width"])
    }

    @Test func missingKeyIsNamed() throws {
        let error = try #require(failure(Frame.self, .dictionary(["x": .double(0)]), key: "f"))
        #expect(error.message.hasPrefix("Cannot decode Frame at f.y:") || error.message.hasPrefix("Cannot decode Frame at f."))
        #expect(error.cause is DecodingError)
    }

    @Test func integersAreCheckedNotWrapped() throws {
        #expect(try DefaultsDecoder().decode(Int8.self, from: .int(127)) == 127)
        #expect(try DefaultsDecoder().decode(UInt64.self, from: .int(.max)) == UInt64(Int64.max))
        for value in [DefaultsValue.int(128), .int(-129)] {
            let error = try #require(failure(Int8.self, value, key: "k"))
            #expect(error.code == .decodingFailed)
            #expect(error.message.contains("does not fit in Int8"))
        }
        #expect(failure(UInt.self, .int(-1))?.message.contains("does not fit in UInt") == true)
        #expect(failure([UInt8].self, .array([.int(1), .int(256)]), key: "bytes")?.message.contains("bytes[1]") == true)
    }

    @Test func numbersWidenOnlyWithoutLoss() throws {
        let decoder = DefaultsDecoder()
        #expect(try decoder.decode(Int.self, from: .double(3)) == 3)
        #expect(try decoder.decode(Double.self, from: .int(3)) == 3)
        #expect(try decoder.decode(Bool.self, from: .int(1)) == true)
        #expect(try decoder.decode(Bool.self, from: .int(0)) == false)
        #expect(failure(Int.self, .double(3.5)) != nil)
        #expect(failure(Int.self, .double(.nan)) != nil)
        #expect(failure(Int64.self, .double(1e19)) != nil)
        #expect(failure(Bool.self, .int(2)) != nil)
        #expect(failure(String.self, .int(2)) != nil)
        #expect(failure(Int.self, .string("2")) != nil)
        #expect(failure(Float.self, .double(1e300)) != nil)
        #expect(try decoder.decode(Float.self, from: .double(.infinity)) == .infinity)
        #expect(failure(Date.self, .double(0)) != nil)
        #expect(failure(URL.self, .string("")) != nil)
        #expect(failure(UUID.self, .string("not-a-uuid")) != nil)
    }

    @Test func optionalAtAbsentKeyIsNil() throws {
        struct Explicit: Decodable {
            var value: Int?
            init(from decoder: any Decoder) throws {
                // `decode(Int?.self)` rather than `decodeIfPresent`: absent still means nil.
                value = try decoder.container(keyedBy: NameKey.self).decode(Int?.self, forKey: NameKey(stringValue: "v"))
            }
        }
        #expect(try DefaultsDecoder().decode(Explicit.self, from: .dictionary([:])).value == nil)
        #expect(try DefaultsDecoder().decode(Explicit.self, from: .dictionary(["v": .int(4)])).value == 4)
        #expect(try DefaultsDecoder().decode([Int?].self, from: .array([.int(1)])) == [1])
    }

    @Test func dataDateDecimalRoundTrip() throws {
        struct Mixed: Codable, Equatable { var data: Data; var date: Date; var price: Decimal; var float: Float }
        let mixed = Mixed(data: Data(repeating: 7, count: 100_000), date: Date(timeIntervalSinceReferenceDate: -1.5),
                          price: Decimal(string: "12345678901234567890.123")!, float: .leastNonzeroMagnitude)
        let value = try DefaultsEncoder().encode(mixed)
        guard case .dictionary(let entries) = value else { Issue.record("not a dictionary"); return }
        #expect(entries["price"] == .string("12345678901234567890.123"))
        #expect(try DefaultsDecoder().decode(Mixed.self, from: value) == mixed)
    }

    @Test func hostileDepthFailsCleanly() throws {
        // A value far deeper than any backend accepts, decoded as a recursive type.
        var deep = DefaultsValue.dictionary(["leaf": .dictionary(["_0": .int(0)])])
        for _ in 0..<2_000 { deep = .dictionary(["node": .dictionary(["_0": .array([deep])])]) }
        let error = try #require(failure(Nest.self, deep, key: "deep"))
        #expect(error.code == .decodingFailed)
        #expect(error.message.contains("nests deeper"))
    }

    @Test func randomValuesNeverCrashTheDecoder() {
        var generator = SplitMix(seed: 0xA11CE)
        for _ in 0..<3_000 {
            let value = generator.value(depth: 4)
            _ = try? DefaultsDecoder().decode(Settings.self, from: value)
            _ = try? DefaultsDecoder().decode(Shape.self, from: value)
            _ = try? DefaultsDecoder().decode(Widths.self, from: value)
            _ = try? DefaultsDecoder().decode([String: [Int8?]].self, from: value)
            _ = try? DefaultsDecoder().decode(Nest.self, from: value)
            _ = try? DefaultsDecoder(strategy: .jsonData).decode(Settings.self, from: value)
            _ = try? [String: [UInt16]](defaultsValue: value)
            _ = try? Set<UUID>(defaultsValue: value)
        }
    }
}

/// A small deterministic generator of arbitrary values.
struct SplitMix: RandomNumberGenerator {
    var state: UInt64
    init(seed: UInt64) { state = seed }

    mutating func next() -> UInt64 {
        state &+= 0x9E37_79B9_7F4A_7C15
        var z = state
        z = (z ^ (z >> 30)) &* 0xBF58_476D_1CE4_E5B9
        z = (z ^ (z >> 27)) &* 0x94D0_49BB_1331_11EB
        return z ^ (z >> 31)
    }

    mutating func value(depth: Int) -> DefaultsValue {
        let names = ["window", "frame", "x", "y", "width", "height", "title", "zoom", "circle", "radius", "none",
                     "polygon", "_0", "closed", "i8", "u64", "node", "leaf", "id", "saved", "blob", "recent"]
        switch Int.random(in: depth > 0 ? 0...7 : 0...5, using: &self) {
        case 0: return .bool(Bool.random(using: &self))
        case 1: return .int([Int64.min, .max, 0, 1, -1, 128, 256, 65536, Int64.random(in: .min ... .max, using: &self)].randomElement(using: &self)!)
        case 2: return .double([0, -0.0, .nan, .infinity, 1e300, 3.5, 2].randomElement(using: &self)!)
        case 3: return .string(["", "x", "https://a.b", "E621E1F8-C36C-495A-93FC-0C247A3E6E5F", "{\"a\":1}"].randomElement(using: &self)!)
        case 4: return .data(Data((0..<Int.random(in: 0...8, using: &self)).map { _ in UInt8.random(in: 0...255, using: &self) }))
        case 5: return .date(Date(timeIntervalSinceReferenceDate: Double(Int.random(in: -1000...1000, using: &self))))
        case 6: return .array((0..<Int.random(in: 0...4, using: &self)).map { _ in value(depth: depth - 1) })
        default:
            var entries: [String: DefaultsValue] = [:]
            for _ in 0..<Int.random(in: 0...5, using: &self) {
                entries[names.randomElement(using: &self)!] = value(depth: depth - 1)
            }
            return .dictionary(entries)
        }
    }
}
