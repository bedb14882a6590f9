import AnyDefaultsCore
import AnyDefaultsJSONFile
import AnyDefaultsTesting
import Foundation
import Testing

@Suite struct ExactJSONTests {
    @Test func everyEdgeValueRoundTripsAsASingleValue() throws {
        for (name, value) in ConformanceValues.edgeCases {
            let text = ExactJSON.string(from: value)
            #expect(try ExactJSON.value(from: text) == value, "\(name): \(text.prefix(80))")
        }
    }

    @Test func plainValuesStayPlainAndTagsAppearAtTheTop() {
        #expect(ExactJSON.string(from: .string("a\"b")) == #""a\"b""#)
        #expect(ExactJSON.string(from: .int(-3)) == "-3")
        #expect(ExactJSON.string(from: .double(1)) == "1.0")
        #expect(ExactJSON.string(from: .bool(true)) == "true")
        #expect(ExactJSON.string(from: .double(.nan)) == #"{"$double": "nan"}"#)
        #expect(ExactJSON.string(from: .data(Data([1, 2]))) == #"{"$data": "AQI="}"#)
        #expect(ExactJSON.string(from: .array([.int(1), .string("x")])) == "[\n  1,\n  \"x\"\n]")
    }

    @Test func readsPlainJSONNumbersAsIntOrDouble() throws {
        #expect(try ExactJSON.value(from: #"{"a": [1, 2.5, 1e3, -0.0]}"#)
            == .dictionary(["a": .array([.int(1), .double(2.5), .double(1000), .double(-0.0)])]))
    }

    @Test func rejectsBadTextWithItsPosition() {
        #expect { try ExactJSON.value(from: "[1,\n 2,,]") } throws: {
            guard let error = $0 as? DefaultsError else { return false }
            return error.code == .invalidValue && error.message.contains("line 2")
        }
        #expect { try ExactJSON.value(from: "null") } throws: { ($0 as? DefaultsError)?.code == .invalidValue }
        #expect { try ExactJSON.store(from: Data("[1]".utf8)) } throws: { ($0 as? DefaultsError)?.code == .corrupted }
    }

    @Test func aStoreRoundTripsThroughItsText() throws {
        let store: [String: DefaultsValue] = ["b": .date(Date(timeIntervalSinceReferenceDate: 12.5)), "a": .dictionary(["$x": .int(1)])]
        let data = ExactJSON.data(from: store)
        #expect(try ExactJSON.store(from: data) == store)
        #expect(String(decoding: data, as: UTF8.self).hasPrefix("{\n  \"a\""))
    }
}
