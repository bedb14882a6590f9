@testable import AnyDefaultsJSONFile
import AnyDefaultsCore
import Foundation
import Testing

/// Bad files: every one is rejected with a reason, a line and a column, and none crashes.
@Suite struct JSONFileDecodingErrorTests {
    private func failure(_ text: String) -> JSONFileParseError? {
        failure(Array(text.utf8))
    }

    private func failure(_ bytes: [UInt8]) -> JSONFileParseError? {
        do {
            _ = try JSONFileDecoder.decode(bytes)
            return nil
        } catch {
            return error
        }
    }

    struct Case: Sendable, CustomTestStringConvertible {
        var text: String
        var line: Int
        var column: Int
        var reason: String
        var testDescription: String { text.debugDescription }
    }

    static let cases: [Case] = [
        Case(text: "", line: 1, column: 1, reason: "empty"),
        Case(text: "   \n  ", line: 2, column: 3, reason: "empty"),
        Case(text: "[1, 2]", line: 1, column: 1, reason: "top level must be a JSON object"),
        Case(text: "\"text\"", line: 1, column: 1, reason: "not a string"),
        Case(text: "{\n  \"a\": 1,\n  \"b\": 2", line: 3, column: 9, reason: "ends before the object opened at line 1, column 1"),
        Case(text: "{\"a\": [1, 2", line: 1, column: 12, reason: "array opened at line 1, column 7"),
        Case(text: "{\"a\": \"abc", line: 1, column: 7, reason: "ends inside the string"),
        Case(text: "{\"a\": 1,}", line: 1, column: 9, reason: "comma must not follow the last member"),
        Case(text: "{\"a\": [1,]}", line: 1, column: 10, reason: "comma must not follow the last element"),
        Case(text: "{\"a\": 1 \"b\": 2}", line: 1, column: 9, reason: "expected ',' or '}'"),
        Case(text: "{\"a\" 1}", line: 1, column: 6, reason: "expected ':'"),
        Case(text: "{a: 1}", line: 1, column: 2, reason: "member name in double quotes"),
        Case(text: "{\"a\": 01}", line: 1, column: 7, reason: "leading zeros"),
        Case(text: "{\"a\": 1.}", line: 1, column: 9, reason: "digit after the decimal point"),
        Case(text: "{\"a\": 1e}", line: 1, column: 9, reason: "digit in the exponent"),
        Case(text: "{\"a\": -}", line: 1, column: 8, reason: "expected a digit"),
        Case(text: "{\"a\": NaN}", line: 1, column: 7, reason: "expected a value"),
        Case(text: "{\"a\": tru}", line: 1, column: 7, reason: "expected a value"),
        Case(text: "{\"a\": null}", line: 1, column: 7, reason: "null cannot be stored"),
        Case(text: "{\"a\": 1} x", line: 1, column: 10, reason: "unexpected text after"),
        Case(text: "{\"a\": 1} // note", line: 1, column: 10, reason: "unexpected text after"),
        Case(text: "{\"a\": \"x\\qy\"}", line: 1, column: 9, reason: "unknown escape"),
        Case(text: "{\"a\": \"\\u12\"}", line: 1, column: 8, reason: "four hexadecimal digits"),
        Case(text: "{\"a\": \"\\ud800\"}", line: 1, column: 8, reason: "unpaired UTF-16 surrogate"),
        Case(text: "{\"a\": \"\\udc00\\ud800\"}", line: 1, column: 8, reason: "unpaired UTF-16 surrogate"),
        Case(text: "{\"a\": \"tab\there\"}", line: 1, column: 11, reason: "control character"),
        Case(text: "{\"a\": 1, \"a\": 2}", line: 1, column: 10, reason: "\"a\" appears more than once"),
        Case(text: "{\"caf\u{E9}\": 1, \"cafe\u{301}\": 2}", line: 1, column: 13, reason: "appears more than once"),
        Case(text: "{\"\": 1}", line: 1, column: 2, reason: "key must not be empty"),
        Case(text: "{\"a\": {\"x\": 1, \"x\": 2}}", line: 1, column: 16, reason: "appears more than once"),
        Case(text: "{\"a\": 9223372036854775808}", line: 1, column: 7, reason: "outside the 64-bit range"),
        Case(text: "{\"a\": {\"$ref\": 1}}", line: 1, column: 8, reason: "this name is not one"),
        Case(text: "{\"a\": {\"$double\": \"NaN\"}}", line: 1, column: 19, reason: "$double takes"),
        Case(text: "{\"a\": {\"$double\": true}}", line: 1, column: 19, reason: "$double takes"),
        Case(text: "{\"a\": {\"$date\": \"2024-02-30T00:00:00Z\"}}", line: 1, column: 17, reason: "$date takes"),
        Case(text: "{\"a\": {\"$date\": \"2024-05-01 12:00:00\"}}", line: 1, column: 17, reason: "$date takes"),
        Case(text: "{\"a\": {\"$data\": \"***\"}}", line: 1, column: 17, reason: "$data takes a base64 string"),
        Case(text: "{\"a\": {\"$data\": 12}}", line: 1, column: 17, reason: "$data takes a base64 string"),
        Case(text: "{\"a\": {\"$dict\": [1]}}", line: 1, column: 17, reason: "$dict takes an object"),
        Case(text: "{\"a\": {\"$dict\": {\"$x\": {\"$y\": 1}}}}", line: 1, column: 25, reason: "this name is not one"),
        Case(text: "{\n\t\"ключ\": [1,\n\t\t\"日本\", ]}", line: 3, column: 9, reason: "comma must not follow"),
    ]

    @Test(arguments: cases) func rejectsWithPosition(_ testCase: Case) throws {
        let error = try #require(failure(testCase.text))
        #expect(error.reason.contains(testCase.reason), "\(error)")
        #expect(error.line == testCase.line, "\(error)")
        #expect(error.column == testCase.column, "\(error)")
    }

    @Test func rejectsInvalidUTF8AtTheBadByte() throws {
        let sequences: [[UInt8]] = [[0xFF], [0xC0, 0x80], [0xE0, 0x80, 0x80], [0xED, 0xA0, 0x80], [0xF4, 0x90, 0x80, 0x80], [0xC3]]
        for bad in sequences {
            let error = try #require(failure(Array("{\"a\": \"xy".utf8) + bad + Array("\"}".utf8)))
            #expect(error.reason == "invalid UTF-8")
            #expect(error.offset == 9)
        }
    }

    @Test func acceptsAByteOrderMark() throws {
        #expect(try JSONFileDecoder.decode([0xEF, 0xBB, 0xBF] + Array("{\"a\": 1}".utf8)) == ["a": .int(1)])
    }

    @Test func errorsDoNotEchoStoredText() throws {
        let error = try #require(failure("{\"a\": {\"$date\": \"secret-token\"}, \"b\": \"secret\" x}"))
        #expect(!error.description.contains("secret"))
    }

    @Test func deepNestingIsRejectedWithoutExhaustingTheStack() throws {
        for opener in ["[", "{\"k\":"] {
            let text = "{\"a\": " + String(repeating: opener, count: 200_000)
            let error = try #require(failure(text))
            #expect(error.reason.contains("nest deeper"))
        }
        // Within the JSON limit but beyond what a value may nest.
        let tooDeep = "{\"a\": " + String(repeating: "[", count: 513) + String(repeating: "]", count: 513) + "}"
        #expect(try #require(failure(tooDeep)).reason.contains("values nest deeper than 512"))
        let limit = "{\"a\": " + String(repeating: "[", count: 512) + String(repeating: "]", count: 512) + "}"
        #expect(failure(limit) == nil)
    }

    /// Every prefix of a valid file (a truncated write by another program) is rejected cleanly.
    @Test func everyTruncationIsRejected() throws {
        let values: [String: DefaultsValue] = [
            "a": .array([.int(1), .double(2.5), .string("x\"é\n")]), "b": .dictionary(["$x": .data(Data([1, 2]))]),
            "c": .date(Date(timeIntervalSinceReferenceDate: 1.5)), "d": .bool(true),
        ]
        let bytes = JSONFileEncoder.encode(values)
        for length in 0..<(bytes.count - 1) {
            // Cutting only the final newline leaves a complete file.
            #expect(failure(Array(bytes[..<length])) != nil, "prefix of \(length) bytes")
        }
    }

    /// Random damage never crashes the reader; whatever it accepts is a valid store.
    @Test func randomDamageNeverCrashes() {
        var generator = SystemRandomNumberGenerator()
        let original = JSONFileEncoder.encode([
            "a": .array([.int(1), .double(-0.0), .string("é\u{1}")]), "b": .dictionary(["$x": .data(Data([1]))]),
            "c": .date(Date(timeIntervalSinceReferenceDate: 1.25)), "d": .double(.nan),
        ])
        let alphabet = Array("{}[]\":,\\u0123456789.eE-+ \ntrufalsn$".utf8) + [0x80, 0xC3, 0xFF, 0x00]
        for _ in 0..<3000 {
            var bytes = original
            for _ in 0..<Int.random(in: 1...4, using: &generator) {
                let position = Int.random(in: 0..<bytes.count, using: &generator)
                switch Int.random(in: 0..<3, using: &generator) {
                case 0: bytes[position] = alphabet.randomElement(using: &generator) ?? 0
                case 1: bytes.remove(at: position)
                default: bytes.insert(alphabet.randomElement(using: &generator) ?? 0, at: position)
                }
            }
            if let values = try? JSONFileDecoder.decode(bytes) {
                #expect(values.values.allSatisfy { $0.nestingDepth <= DefaultsValue.maximumNestingDepth })
            }
        }
    }
}
