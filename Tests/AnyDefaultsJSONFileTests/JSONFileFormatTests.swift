@testable import AnyDefaultsJSONFile
import AnyDefaultsCore
import Foundation
import Testing

/// The file format on its own: what the encoder writes, and that every value reads back exactly.
@Suite struct JSONFileFormatTests {
    private func text(_ values: [String: DefaultsValue]) -> String {
        String(decoding: JSONFileEncoder.encode(values), as: UTF8.self)
    }

    private func roundTrip(_ values: [String: DefaultsValue]) throws -> [String: DefaultsValue] {
        try JSONFileDecoder.decode(JSONFileEncoder.encode(values))
    }

    @Test func writesTheDocumentedLayout() {
        let values: [String: DefaultsValue] = [
            "window.width": .int(1280),
            "ui.theme": .string("dark"),
            "ui.scale": .double(1),
            "onboarded": .bool(true),
            "recent": .array([.string("a.txt"), .string("b.txt")]),
            "lastOpened": .date(Date(timeIntervalSinceReferenceDate: 736_257_600)),
            "token": .data(Data([0, 1, 2, 255])),
            "ratio": .double(.nan),
            "query": .dictionary(["$where": .string("x")]),
            "empty": .dictionary([:]),
            "none": .array([]),
            "nested": .dictionary(["b": .int(-1), "a": .array([.bool(false)])]),
        ]
        #expect(text(values) == #"""
            {
              "empty": {},
              "lastOpened": {"$date": "2024-05-01T12:00:00Z"},
              "nested": {
                "a": [
                  false
                ],
                "b": -1
              },
              "none": [],
              "onboarded": true,
              "query": {
                "$dict": {
                  "$where": "x"
                }
              },
              "ratio": {"$double": "nan"},
              "recent": [
                "a.txt",
                "b.txt"
              ],
              "token": {"$data": "AAEC/w=="},
              "ui.scale": 1.0,
              "ui.theme": "dark",
              "window.width": 1280
            }

            """#)
    }

    @Test func anEmptyStoreIsAnEmptyObject() throws {
        #expect(text([:]) == "{}\n")
        #expect(try roundTrip([:]).isEmpty)
    }

    @Test func keysAreSortedByTheirUTF8Bytes() {
        let output = text(["b": .int(1), "a": .int(1), "B": .int(1), "é": .int(1), "z": .int(1), "ä": .int(1)])
        let order = ["\"B\"", "\"a\"", "\"b\"", "\"z\"", "\"ä\"", "\"é\""].map { output.range(of: $0)?.lowerBound }
        #expect(order.allSatisfy { $0 != nil })
        #expect(order.compactMap { $0 } == order.compactMap { $0 }.sorted())
    }

    @Test func theSameContentsGiveTheSameBytes() {
        var a: [String: DefaultsValue] = [:]
        var b: [String: DefaultsValue] = [:]
        for index in 0..<200 { a["key\(index)"] = .dictionary(["x\(index)": .int(Int64(index)), "y": .double(0.5)]) }
        for index in (0..<200).reversed() { b["key\(index)"] = .dictionary(["y": .double(0.5), "x\(index)": .int(Int64(index))]) }
        #expect(JSONFileEncoder.encode(a) == JSONFileEncoder.encode(b))
    }

    @Test func integersStayIntegersAndDoublesKeepAFraction() {
        #expect(text(["a": .int(1)]).contains(#""a": 1"#))
        #expect(text(["a": .double(1)]).contains(#""a": 1.0"#))
        #expect(text(["a": .double(-0.0)]).contains(#""a": -0.0"#))
        #expect(text(["a": .double(1e16)]).contains(#""a": 1e+16"#))
        #expect(text(["a": .int(.min)]).contains(#""a": -9223372036854775808"#))
        #expect(text(["a": .bool(true)]).contains(#""a": true"#))
    }

    @Test func scalarsRoundTripExactly() throws {
        var values: [String: DefaultsValue] = [
            "intMin": .int(.min), "intMax": .int(.max), "zero": .int(0), "minusOne": .int(-1),
            "one": .double(1), "negativeZero": .double(-0.0), "positiveZero": .double(0),
            "inf": .double(.infinity), "minusInf": .double(-.infinity), "nan": .double(.nan),
            "tenth": .double(0.1), "max": .double(.greatestFiniteMagnitude), "tiny": .double(.leastNonzeroMagnitude),
            "minNormal": .double(.leastNormalMagnitude), "third": .double(1.0 / 3), "big": .double(9_007_199_254_740_992),
            "true": .bool(true), "false": .bool(false),
            "emptyString": .string(""), "emptyData": .data(Data()),
            "text": .string("quote \" backslash \\ slash / tab \t newline \n nul \u{0} bell \u{7} del \u{7F}"),
            "unicode": .string("e\u{301} é 日本語 🏳️‍🌈 \u{10FFFF} \u{2028}"),
            "bytes": .data(Data((0...255).map { UInt8($0) })),
        ]
        var generator = SystemRandomNumberGenerator()
        for index in 0..<500 {
            values["random\(index)"] = .double(Double(bitPattern: generator.next()))
            values["randomInt\(index)"] = .int(Int64(bitPattern: generator.next()))
        }
        let back = try roundTrip(values)
        #expect(back == values)
        // Equality treats NaNs alike; check the bits of the others by hand.
        for (key, value) in values {
            if case .double(let original) = value, !original.isNaN, case .double(let read)? = back[key] {
                #expect(read.bitPattern == original.bitPattern, "\(key)")
            }
        }
        #expect(back["one"] != .int(1))
        #expect(back["true"] != .int(1))
    }

    @Test func datesRoundTripExactly() throws {
        let intervals: [Double] = [
            0, -0.0, 736_257_600, 736_257_600.25, 736_257_600.123, -1, -0.5, 1e-300, .nan, .infinity, -.infinity,
            Date.distantPast.timeIntervalSinceReferenceDate, Date.distantFuture.timeIntervalSinceReferenceDate,
            Date().timeIntervalSinceReferenceDate, 1e18, -1e18, .greatestFiniteMagnitude,
        ]
        var values: [String: DefaultsValue] = [:]
        for (index, interval) in intervals.enumerated() {
            values["date\(index)"] = .date(Date(timeIntervalSinceReferenceDate: interval))
        }
        for index in 0..<300 {
            values["random\(index)"] = .date(Date(timeIntervalSinceReferenceDate: .random(in: -7e10...7e10)))
        }
        let back = try roundTrip(values)
        #expect(back == values)
        for (key, value) in values {
            guard case .date(let original) = value, case .date(let read)? = back[key] else {
                Issue.record("\(key) is not a date")
                continue
            }
            let (a, b) = (original.timeIntervalSinceReferenceDate, read.timeIntervalSinceReferenceDate)
            #expect(a.bitPattern == b.bitPattern || (a.isNaN && b.isNaN), "\(key)")
        }
    }

    @Test func datesAreReadableWhereExactAndNumbersOtherwise() {
        #expect(text(["d": .date(Date(timeIntervalSinceReferenceDate: 0.5))]).contains(#"{"$date": "2001-01-01T00:00:00.5Z"}"#))
        #expect(text(["d": .date(Date(timeIntervalSinceReferenceDate: -0.0))]).contains(#"{"$date": -0.0}"#))
        #expect(text(["d": .date(Date(timeIntervalSinceReferenceDate: 1e-300))]).contains(#"{"$date": 1e-300}"#))
        #expect(text(["d": .date(Date(timeIntervalSinceReferenceDate: -.infinity))]).contains(#"{"$date": "-inf"}"#))
    }

    @Test func dictionariesThatLookLikeTagsAreWrapped() throws {
        let values: [String: DefaultsValue] = [
            "one": .dictionary(["$date": .string("not a date")]),
            "dollar": .dictionary(["$": .int(1)]),
            "wrapped": .dictionary(["$dict": .dictionary(["$dict": .dictionary([:])])]),
            "two": .dictionary(["$date": .int(1), "$data": .int(2)]),
            "plain": .dictionary(["date": .int(1)]),
            "inArray": .array([.dictionary(["$x": .array([.dictionary(["$y": .bool(true)])])])]),
        ]
        #expect(try roundTrip(values) == values)
        let output = text(values)
        // Only one-member dictionaries with a `$` key need the wrapper.
        #expect(output.contains(#""two": {"# + "\n" + #"    "$data": 2,"#))
        #expect(output.contains(#""plain": {"# + "\n" + #"    "date": 1"#))
    }

    @Test func nestingUpToTheLimitRoundTrips() throws {
        var deep = DefaultsValue.int(1)
        var deepDictionaries = DefaultsValue.int(1)
        for level in 0..<DefaultsValue.maximumNestingDepth {
            deep = level.isMultiple(of: 2) ? .array([deep]) : .dictionary(["k": deep])
            deepDictionaries = .dictionary(["$": deepDictionaries])
        }
        let values = ["deep": deep, "wrapped": deepDictionaries]
        #expect(try roundTrip(values) == values)
    }

    @Test func largeDataRoundTrips() throws {
        var generator = SystemRandomNumberGenerator()
        let bytes = Data((0..<3_000_000).map { _ in UInt8.random(in: 0...255, using: &generator) })
        #expect(try roundTrip(["blob": .data(bytes)]) == ["blob": .data(bytes)])
    }

    @Test func readsWhatAPersonMightWrite() throws {
        let file = #"""
            {"b":[1,2.5,-3e2,true,false,"x\u00e9\ud83d\ude00"],
             "a" : {"$double": 2}, "c": {"$date": "2024-05-01T14:00:00+02:00"}, "d": {"$date": 0},
             "e": {"$double": "+inf"}, "f": {"$dict": {}}, "g": {"$data": ""}, "h": 1E2, "i": -0,
             "j\u0000k": "\/"}
            """#
        let values = try JSONFileDecoder.decode(Array(file.utf8))
        #expect(values == [
            "b": .array([.int(1), .double(2.5), .double(-300), .bool(true), .bool(false), .string("xé😀")]),
            "a": .double(2), "c": .date(Date(timeIntervalSinceReferenceDate: 736_257_600)),
            "d": .date(Date(timeIntervalSinceReferenceDate: 0)), "e": .double(.infinity), "f": .dictionary([:]),
            "g": .data(Data()), "h": .double(100), "i": .int(0), "j\u{0}k": .string("/"),
        ])
    }

    @Test func topLevelKeysAreCanonical() throws {
        // "é" written decomposed in the file is the same key as precomposed "é".
        let values = try JSONFileDecoder.decode(Array("{\"caf\u{65}\u{301}\": 1}".utf8))
        #expect(values.keys.first?.unicodeScalars.count == 4)
        #expect(values["café"] == .int(1))
    }
}
