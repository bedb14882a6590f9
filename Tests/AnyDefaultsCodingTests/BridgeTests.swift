import AnyDefaultsCore
import Foundation
import Testing

enum Theme: String, DefaultsSerializable { case light, dark }
enum Level: Int, Codable, DefaultsCodable { case low = 1, high = 2 }

struct Layout: Codable, Equatable, DefaultsCodable {
    var columns: Int
    var sidebar: Bool
}

struct JSONProfile: Codable, Equatable, DefaultsCodable {
    static var defaultsCodingStrategy: DefaultsCodingStrategy { .jsonData }
    var name: String
}

@Suite struct BridgeTests {
    func roundTrip<T: DefaultsSerializable & Equatable>(_ value: T, _ stored: DefaultsValue) throws {
        #expect(try value.defaultsValue == stored)
        #expect(try T(defaultsValue: stored) == value)
    }

    @Test func scalarsMapToTheirCases() throws {
        try roundTrip(true, .bool(true))
        try roundTrip("héllo", .string("héllo"))
        try roundTrip(-0.0, .double(-0.0))
        try roundTrip(Float(1.5), .double(1.5))
        try roundTrip(Data([1, 2]), .data(Data([1, 2])))
        try roundTrip(Date(timeIntervalSinceReferenceDate: 5), .date(Date(timeIntervalSinceReferenceDate: 5)))
        try roundTrip(URL(string: "https://example.com/x")!, .string("https://example.com/x"))
        let uuid = UUID()
        try roundTrip(uuid, .string(uuid.uuidString))
        try roundTrip(Decimal(string: "0.1")!, .string("0.1"))
        try roundTrip(DefaultsValue.array([1, "a"]), .array([.int(1), .string("a")]))
    }

    @Test func everyIntegerWidthRoundTripsAndOverflowIsTyped() throws {
        try roundTrip(Int.min, .int(.min))
        try roundTrip(Int8.min, .int(-128))
        try roundTrip(Int16.max, .int(32767))
        try roundTrip(Int32.min, .int(Int64(Int32.min)))
        try roundTrip(Int64.max, .int(.max))
        try roundTrip(UInt.min, .int(0))
        try roundTrip(UInt8.max, .int(255))
        try roundTrip(UInt16.max, .int(65535))
        try roundTrip(UInt32.max, .int(Int64(UInt32.max)))
        try roundTrip(UInt64(Int64.max), .int(.max))

        #expect { try UInt64.max.defaultsValue } throws: { ($0 as? DefaultsError)?.code == .encodingFailed }
        #expect { try (UInt(Int64.max) + 1).defaultsValue } throws: { ($0 as? DefaultsError)?.code == .encodingFailed }
        for (read, stored) in [
            ({ try Int8(defaultsValue: $0) } as (DefaultsValue) throws -> Any, DefaultsValue.int(128)),
            ({ try UInt8(defaultsValue: $0) }, .int(-1)),
            ({ try UInt16(defaultsValue: $0) }, .int(65536)),
            ({ try Int32(defaultsValue: $0) }, .int(Int64(Int32.max) + 1)),
            ({ try UInt64(defaultsValue: $0) }, .int(-1)),
            ({ try Int(defaultsValue: $0) }, .double(1e30)),
            ({ try Int(defaultsValue: $0) }, .double(2.5)),
            ({ try Int(defaultsValue: $0) }, .string("1")),
        ] {
            #expect { try read(stored) } throws: { ($0 as? DefaultsError)?.code == .typeMismatch }
        }
        #expect(try Int(defaultsValue: .double(42)) == 42)
        #expect(try Double(defaultsValue: .int(42)) == 42)
        #expect(try Bool(defaultsValue: .int(1)) == true)
    }

    /// `Int` and `String` read their own case inline and leave every other case to the general
    /// conversion: the same values, the same errors as the other scalars.
    @Test func inlinedScalarReadsConvertAndFailLikeTheOthers() throws {
        #expect(try Int(defaultsValue: .int(-7)) == -7)
        #expect(try Int(defaultsValue: .double(-7)) == -7)
        #expect(try String(defaultsValue: .string("")) == "")
        let failures: [(DefaultsValue, (DefaultsValue) throws -> Any, String)] = [
            (.string("1"), { try Int(defaultsValue: $0) }, "Cannot read Int at the top level: expected Int, found a string."),
            (.double(0.5), { try Int(defaultsValue: $0) }, "Cannot read Int at the top level: expected Int, found a double."),
            (.int(1), { try String(defaultsValue: $0) }, "Cannot read String at the top level: expected String, found an int."),
            (.data(Data()), { try String(defaultsValue: $0) }, "Cannot read String at the top level: expected String, found a data."),
        ]
        for (stored, read, message) in failures {
            #expect { try read(stored) } throws: { error in
                let error = try #require(error as? DefaultsError)
                return error.code == .typeMismatch && error.message == message && error.backend == "DefaultsSerializable"
            }
        }
    }

    @Test func collectionsAndOptionals() throws {
        try roundTrip([1, 2, 3], .array([.int(1), .int(2), .int(3)]))
        try roundTrip(["a": [true]], .dictionary(["a": .array([.bool(true)])]))
        try roundTrip(Set(["x"]), .array([.string("x")]))
        try roundTrip(Optional(5), .int(5))
        #expect(try [String: Int?](defaultsValue: .dictionary(["a": .int(1)])) == ["a": 1])
        #expect(try (["a": 1, "b": nil] as [String: Int?]).defaultsValue == .dictionary(["a": .int(1)]))
        #expect { try [1, nil].defaultsValue } throws: { ($0 as? DefaultsError)?.code == .encodingFailed }
        #expect { try Optional<Int>.none.defaultsValue } throws: { ($0 as? DefaultsError)?.code == .encodingFailed }

        do {
            _ = try [[Int]](defaultsValue: .array([.array([.int(1)]), .array([.int(2), .string("3")])]))
            Issue.record("read a string as an Int")
        } catch {
            #expect(error.code == .typeMismatch)
            #expect(error.message == "Cannot read Int at [1][1]: expected Int, found a string.")
        }
        do {
            _ = try [String: [Int]](defaultsValue: .dictionary(["sizes": .array([.bool(true)])]))
            Issue.record("read a Bool as an Int")
        } catch {
            #expect(error.message == "Cannot read Int at sizes[0]: expected Int, found a bool.")
        }
    }

    @Test func rawRepresentableEnums() throws {
        try roundTrip(Theme.dark, .string("dark"))
        try roundTrip(Level.high, .int(2))
        #expect { try Theme(defaultsValue: .string("sepia")) } throws: { ($0 as? DefaultsError)?.code == .typeMismatch }
        #expect { try Theme(defaultsValue: .int(1)) } throws: { ($0 as? DefaultsError)?.code == .typeMismatch }
    }

    @Test func codableOptIn() throws {
        try roundTrip(Layout(columns: 3, sidebar: false), .dictionary(["columns": .int(3), "sidebar": .bool(false)]))
        let profile = JSONProfile(name: "ada")
        guard case .data(let json) = try profile.defaultsValue else { Issue.record("not JSON data"); return }
        #expect(try JSONDecoder().decode(JSONProfile.self, from: json) == profile)
        #expect(try JSONProfile(defaultsValue: .data(json)) == profile)
        #expect { try Layout(defaultsValue: .dictionary(["columns": .string("3")])) } throws: {
            ($0 as? DefaultsError)?.code == .decodingFailed
        }
        try roundTrip([Layout(columns: 1, sidebar: true)], .array([.dictionary(["columns": .int(1), "sidebar": .bool(true)])]))
    }
}
