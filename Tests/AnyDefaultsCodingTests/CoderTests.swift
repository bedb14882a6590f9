import AnyDefaultsCore
import Foundation
import Testing

// Types shaped like real settings.
struct Frame: Codable, Equatable { var x, y, width, height: Double }
struct Window: Codable, Equatable { var title: String; var frame: [Frame]; var zoom: Float? }
struct Settings: Codable, Equatable { var window: Window; var recent: [URL]; var id: UUID; var saved: Date; var blob: Data }

enum Shape: Codable, Equatable {
    case none
    case circle(radius: Double)
    case polygon([Int], closed: Bool)
}

struct Widths: Codable, Equatable {
    var i8: Int8, i16: Int16, i32: Int32, i64: Int64, i: Int
    var u8: UInt8, u16: UInt16, u32: UInt32, u64: UInt64, u: UInt
}

/// A recursive type, to build values of any depth.
indirect enum Nest: Codable, Equatable {
    case leaf(Int)
    case node([Nest])

    static func depth(_ n: Int) -> Nest {
        var nest = Nest.leaf(0)
        for _ in 0..<n { nest = .node([nest]) }
        return nest
    }
}

let sampleSettings = Settings(
    window: Window(title: "Main", frame: [Frame(x: 0, y: 0, width: 800, height: 600), Frame(x: 1, y: 2, width: 3, height: 4)], zoom: nil),
    recent: [URL(string: "https://example.com/a?b=c")!, URL(fileURLWithPath: "/tmp/file.txt")],
    id: UUID(uuidString: "E621E1F8-C36C-495A-93FC-0C247A3E6E5F")!,
    saved: Date(timeIntervalSinceReferenceDate: 12345.678),
    blob: Data([0, 1, 2, 255]))

@Suite struct EncoderTests {
    @Test func nestedStructBecomesReadableTree() throws {
        let value = try DefaultsEncoder().encode(sampleSettings)
        let expected: DefaultsValue = .dictionary([
            "window": .dictionary([
                "title": .string("Main"),
                "frame": .array([
                    .dictionary(["x": .double(0), "y": .double(0), "width": .double(800), "height": .double(600)]),
                    .dictionary(["x": .double(1), "y": .double(2), "width": .double(3), "height": .double(4)]),
                ]),
                // zoom is nil: absent, not null
            ]),
            "recent": .array([.string("https://example.com/a?b=c"), .string("file:///tmp/file.txt")]),
            "id": .string("E621E1F8-C36C-495A-93FC-0C247A3E6E5F"),
            "saved": .date(Date(timeIntervalSinceReferenceDate: 12345.678)),
            "blob": .data(Data([0, 1, 2, 255])),
        ])
        #expect(value == expected)
        #expect(try DefaultsDecoder().decode(Settings.self, from: value) == sampleSettings)
    }

    @Test func optionalsPresentAndAbsentRoundTrip() throws {
        var window = sampleSettings.window
        window.zoom = 1.5
        let value = try DefaultsEncoder().encode(window)
        guard case .dictionary(let entries) = value else { Issue.record("not a dictionary"); return }
        #expect(entries["zoom"] == .double(1.5))
        #expect(try DefaultsDecoder().decode(Window.self, from: value) == window)
        // A top-level nil has nothing to store.
        #expect(try DefaultsEncoder().encodeIfPresent(Optional<Int>.none) == nil)
        #expect(throws: DefaultsError.self) { try DefaultsEncoder().encode(Optional<Int>.none) }
        // A dictionary drops nil values.
        #expect(try DefaultsEncoder().encode(["a": 1, "b": nil] as [String: Int?]) == .dictionary(["a": .int(1)]))
    }

    @Test func enumsWithAssociatedValuesUseSwiftsShape() throws {
        let encoder = DefaultsEncoder()
        #expect(try encoder.encode(Shape.circle(radius: 2)) == .dictionary(["circle": .dictionary(["radius": .double(2)])]))
        #expect(try encoder.encode(Shape.none) == .dictionary(["none": .dictionary([:])]))
        for shape in [Shape.none, .circle(radius: -0.0), .polygon([1, 2, 3], closed: true)] {
            #expect(try DefaultsDecoder().decode(Shape.self, from: encoder.encode(shape)) == shape)
        }
    }

    @Test func everyIntegerWidthIsAnIntAndOverflowIsAnError() throws {
        let widths = Widths(i8: .min, i16: .min, i32: .min, i64: .min, i: .max,
                            u8: .max, u16: .max, u32: .max, u64: UInt64(Int64.max), u: 7)
        let value = try DefaultsEncoder().encode(widths)
        guard case .dictionary(let entries) = value else { Issue.record("not a dictionary"); return }
        #expect(entries["i8"] == .int(-128))
        #expect(entries["u64"] == .int(.max))
        #expect(try DefaultsDecoder().decode(Widths.self, from: value) == widths)

        var tooBig = widths
        tooBig.u64 = UInt64(Int64.max) + 1
        do {
            _ = try DefaultsEncoder().encode(tooBig, forKey: "limits")
            Issue.record("UInt64 above Int64.max was encoded")
        } catch {
            #expect(error.code == .encodingFailed)
            #expect(error.key == "limits")
            #expect(error.message.contains("limits.u64"))
            #expect(!error.description.contains("9223372036854775808"))
        }
        #expect(throws: DefaultsError.self) { try DefaultsEncoder().encode([UInt.max]) }
    }

    @Test func nilInsideAnArrayIsAnEncodingError() {
        do {
            _ = try DefaultsEncoder().encode([1, nil, 3] as [Int?], forKey: "list")
            Issue.record("nil inside an array was encoded")
        } catch {
            #expect(error.code == .encodingFailed)
            #expect(error.message.contains("list[1]"))
        }
    }

    @Test func nestingIsLimited() throws {
        // Nest.depth(n) nests 3n + 2 containers: each level is ["node": ["_0": [...]]], the
        // leaf ["leaf": ["_0": 0]].
        let fits = Nest.depth((DefaultsValue.maximumNestingDepth - 2) / 3)
        let value = try DefaultsEncoder().encode(fits)
        #expect(value.nestingDepth <= DefaultsValue.maximumNestingDepth)
        #expect(try DefaultsDecoder().decode(Nest.self, from: value) == fits)

        #expect(value.nestingDepth == DefaultsValue.maximumNestingDepth)
        let tooDeep = Nest.depth((DefaultsValue.maximumNestingDepth - 2) / 3 + 1)
        #expect { try DefaultsEncoder().encode(tooDeep) } throws: { ($0 as? DefaultsError)?.code == .encodingFailed }
    }

    @Test func containerMisuseIsAnErrorNotACrash() {
        struct Confused: Encodable {
            func encode(to encoder: any Encoder) throws {
                var keyed = encoder.container(keyedBy: NameKey.self)
                try keyed.encode(1, forKey: NameKey(stringValue: "a"))
                var unkeyed = encoder.unkeyedContainer()
                try unkeyed.encode(2)
            }
        }
        #expect { try DefaultsEncoder().encode(Confused()) } throws: { ($0 as? DefaultsError)?.code == .encodingFailed }
    }

    @Test func classHierarchyWithSuperEncoderRoundTrips() throws {
        let value = try DefaultsEncoder().encode(Derived(base: 1, extra: "x"))
        #expect(value == .dictionary(["extra": .string("x"), "super": .dictionary(["base": .int(1)])]))
        let decoded = try DefaultsDecoder().decode(Derived.self, from: value)
        #expect(decoded.base == 1 && decoded.extra == "x")
    }

    @Test func jsonDataStrategyMatchesFoundationsJSON() throws {
        let blob = try DefaultsEncoder(strategy: .jsonData).encode(sampleSettings.window)
        guard case .data(let json) = blob else { Issue.record("not data"); return }
        #expect(try JSONDecoder().decode(Window.self, from: json) == sampleSettings.window)

        // As another library would have stored it, in data or in a string.
        let foreign = try JSONEncoder().encode(sampleSettings)
        #expect(try DefaultsDecoder(strategy: .jsonData).decode(Settings.self, from: .data(foreign)) == sampleSettings)
        let text = String(decoding: foreign, as: UTF8.self)
        #expect(try DefaultsDecoder(strategy: .jsonData).decode(Settings.self, from: .string(text)) == sampleSettings)
        #expect(try DefaultsEncoder(strategy: .jsonString).encode(["k": 1]) == .string(#"{"k":1}"#))
    }

    @Test func jsonErrorsDoNotQuoteTheData() {
        let secret = Data(#"{"title": "hunter2-secret", "frame": 12}"#.utf8)
        do {
            _ = try DefaultsDecoder(strategy: .jsonData).decode(Window.self, from: .data(secret), forKey: "w")
            Issue.record("decoded a mismatched JSON value")
        } catch {
            #expect(error.code == .decodingFailed)
            #expect(error.message.contains("w.frame"))
            #expect(!error.description.contains("hunter2"))
        }
        #expect(throws: DefaultsError.self) { try DefaultsDecoder(strategy: .jsonData).decode(Window.self, from: .int(1)) }
    }
}

struct NameKey: CodingKey {
    var stringValue: String
    init(stringValue: String) { self.stringValue = stringValue }
    var intValue: Int? { nil }
    init?(intValue: Int) { nil }
}

class Base: Codable {
    var base: Int
    init(base: Int) { self.base = base }
}

final class Derived: Base {
    var extra: String
    enum CodingKeys: String, CodingKey { case extra }
    init(base: Int, extra: String) {
        self.extra = extra
        super.init(base: base)
    }
    required init(from decoder: any Decoder) throws {
        let container = try decoder.container(keyedBy: CodingKeys.self)
        extra = try container.decode(String.self, forKey: .extra)
        try super.init(from: container.superDecoder())
    }
    override func encode(to encoder: any Encoder) throws {
        var container = encoder.container(keyedBy: CodingKeys.self)
        try container.encode(extra, forKey: .extra)
        try super.encode(to: container.superEncoder())
    }
}
