import AnyDefaultsCore
import Foundation
import Testing
import TestSupport

/// The exact JSON codec as part of the core: both layouts, and `DefaultsValue: Codable` with the
/// same mapping, checked on edge values and on seeded random ones against `ExactJSON` itself.
@Suite struct ExactJSONCoreTests {
    /// Values where a lossy mapping would show: integral and signed-zero doubles, extremes, NaN,
    /// dates with fractions and beyond text, data, dictionaries that look like tags.
    static let edges: [DefaultsValue] = [
        .bool(true), .bool(false), .int(0), .int(1), .int(-1), .int(.max), .int(.min),
        .double(1), .double(-0.0), .double(0), .double(0.1), .double(-2.5e-300), .double(1e300), .double(.greatestFiniteMagnitude),
        .double(.leastNonzeroMagnitude), .double(.infinity), .double(-.infinity), .double(.nan), .double(9_007_199_254_740_992.0.nextUp),
        .string(""), .string("a\"b\\c\n\t\u{0}\u{1F}"), .string("\u{E9} e\u{301} 日本 🇫🇷"), .string("1.0"), .string("$date"),
        .data(Data()), .data(Data([0, 255, 10])), .date(Date(timeIntervalSinceReferenceDate: 0)),
        .date(Date(timeIntervalSinceReferenceDate: 1234.5678)), .date(Date(timeIntervalSinceReferenceDate: -1e15)),
        .date(Date(timeIntervalSinceReferenceDate: .nan)), .date(Date(timeIntervalSinceReferenceDate: -.infinity)),
        .array([]), .dictionary([:]), .array([.int(1), .double(1), .bool(true), .string("1")]),
        .dictionary(["$date": .int(1)]), .dictionary(["$dict": .dictionary(["$x": .bool(true)])]), .dictionary(["$a": .int(1), "$b": .int(2)]),
        .dictionary(["": .string("empty key"), "k": .array([.dictionary(["n": .double(-0.0)])])]),
    ]

    static func random(_ random: inout SeededGenerator, depth: Int = 0) -> DefaultsValue {
        switch Int.random(in: 0..<(depth < 3 ? 9 : 7), using: &random) {
        case 0: return .bool(Bool.random(using: &random))
        case 1: return .int(Int64(bitPattern: random.next()))
        case 2: return .double(Double(bitPattern: random.next()))
        case 3: return .double(Double(Int64.random(in: -1_000_000...1_000_000, using: &random)))
        case 4:
            let scalars = (0..<Int.random(in: 0...8, using: &random)).compactMap { _ in
                Unicode.Scalar(UInt32.random(in: 0...0x2FFFF, using: &random))
            }
            return .string(String(String.UnicodeScalarView(scalars)))
        case 5: return .data(Data((0..<Int.random(in: 0...6, using: &random)).map { _ in UInt8.random(in: 0...255, using: &random) }))
        case 6: return .date(Date(timeIntervalSinceReferenceDate: Double(bitPattern: random.next())))
        case 7: return .array((0..<Int.random(in: 0...4, using: &random)).map { _ in Self.random(&random, depth: depth + 1) })
        default:
            var entries: [String: DefaultsValue] = [:]
            for index in 0..<Int.random(in: 0...4, using: &random) {
                entries[Bool.random(using: &random) ? "$k\(index)" : "k\(index)"] = Self.random(&random, depth: depth + 1)
            }
            return .dictionary(entries)
        }
    }

    static func generated(count: Int) -> [DefaultsValue] {
        let seed = UInt64.random(in: 0...UInt64.max)
        print("ExactJSONCoreTests seed \(seed)")
        var generator = SeededGenerator(seed: seed)
        return (0..<count).map { _ in random(&generator) }
    }

    /// `DefaultsValue`'s description (`print(value)`, `"\(value)"`) is its one line of exact
    /// JSON, not the enum's dump: it names the value and its type, and reads back.
    @Test func descriptionIsOneLineOfExactJSON() throws {
        #expect(DefaultsValue.int(1).description == "1")
        #expect(DefaultsValue.double(2.5).description == "2.5")
        #expect(DefaultsValue.double(1).description != DefaultsValue.int(1).description)
        #expect(DefaultsValue.bool(true).description == "true")
        #expect("\(DefaultsValue.string("a\nb"))" == #""a\nb""#)
        #expect(String(describing: DefaultsValue.dictionary(["a": .array([.int(1), .double(2.5)])])) == #"{"a":[1,2.5]}"#)
        for value in Self.edges + Self.generated(count: 200) {
            let text = "\(value)"
            #expect(text == ExactJSON.string(from: value, layout: .oneLine))
            #expect(!text.contains("\n") && !text.contains("\r"), "\(text.prefix(120))")
            #expect(try ExactJSON.value(from: text) == value, "\(text.prefix(120))")
        }
    }

    @Test func bothLayoutsReadBackEveryValueExactly() throws {
        for value in Self.edges + Self.generated(count: 300) {
            for layout in [ExactJSON.Layout.pretty, .oneLine] {
                let text = ExactJSON.string(from: value, layout: layout)
                #expect(try ExactJSON.value(from: text) == value, "\(layout): \(text.prefix(120))")
                if layout == .oneLine { #expect(!text.contains("\n"), "one line: \(text.prefix(120))") }
            }
        }
    }

    @Test func theOneLineLayoutIsThePrettyOneWithoutLayoutWhitespace() throws {
        let value: DefaultsValue = ["list": [1, "a b"], "when": .date(Date(timeIntervalSinceReferenceDate: 0)), "nan": .double(.nan)]
        #expect(ExactJSON.string(from: value, layout: .oneLine)
            == #"{"list":[1,"a b"],"nan":{"$double":"nan"},"when":{"$date":"2001-01-01T00:00:00Z"}}"#)
        #expect(ExactJSON.string(from: value) == """
            {
              "list": [
                1,
                "a b"
              ],
              "nan": {"$double": "nan"},
              "when": {"$date": "2001-01-01T00:00:00Z"}
            }
            """)
        let store: [String: DefaultsValue] = ["b": .double(1), "a": .data(Data([1, 2]))]
        #expect(String(decoding: ExactJSON.data(from: store, layout: .oneLine), as: UTF8.self) == #"{"a":{"$data":"AQI="},"b":1.0}"# + "\n")
        #expect(try ExactJSON.store(from: ExactJSON.data(from: store, layout: .oneLine)) == store)
    }

    @Test func codableRoundTripsEveryValueThroughJSONEncoderAndDecoder() throws {
        let encoder = JSONEncoder()
        for value in Self.edges + Self.generated(count: 300) {
            let data = try encoder.encode(value)
            let decoded = try JSONDecoder().decode(DefaultsValue.self, from: data)
            #expect(decoded == value, "\(String(decoding: data, as: UTF8.self).prefix(120))")
            // The same mapping: ExactJSON reads what JSONEncoder wrote as the same value.
            #expect(try ExactJSON.value(from: String(decoding: data, as: UTF8.self)) == value)
        }
    }

    @Test func codableKeepsTheCasesApart() throws {
        struct Body: Codable, Equatable { var values: [DefaultsValue] }
        let body = Body(values: [.int(1), .double(1), .bool(true), .string("1"), .double(-0.0), .int(0)])
        let data = try JSONEncoder().encode(body)
        #expect(String(decoding: data, as: UTF8.self) == #"{"values":[1,{"$double":1},true,"1",{"$double":-0},0]}"#)
        let decoded = try JSONDecoder().decode(Body.self, from: data)
        #expect(decoded == body)
        #expect(decoded.values[4] == .double(-0.0) && decoded.values[4] != .double(0))
    }

    @Test func codableRejectsWhatNoValueIs() {
        for text in ["null", "[1, null]", #"{"$nope": 1}"#, #"{"$double": "one"}"#, #"{"$data": "***"}"#, #"{"$date": "yesterday"}"#] {
            #expect(throws: DecodingError.self, "\(text)") { try JSONDecoder().decode(DefaultsValue.self, from: Data(text.utf8)) }
        }
    }
}
