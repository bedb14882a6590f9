@testable import AnyDefaultsLMDB
import AnyDefaultsCore
import Foundation
import Testing

@Suite struct LMDBValueCodecTests {
    @Test func everyEdgeValueRoundTripsToTheBit() throws {
        for (name, value) in EdgeValues.all {
            let record = LMDBValueCodec.encode(value)
            #expect(record.first == LMDBValueCodec.version, "\(name)")
            let decoded = try LMDBValueCodec.decode(record)
            #expect(EdgeValues.identical(decoded, value), "\(name) did not round-trip exactly")
        }
    }

    @Test func typesStayDistinct() throws {
        let values: [DefaultsValue] = [.int(1), .double(1), .bool(true), .date(Date(timeIntervalSinceReferenceDate: 1)), .string("1"), .data(Data([1]))]
        let records = Set(values.map(LMDBValueCodec.encode))
        #expect(records.count == values.count)
        for value in values { #expect(try LMDBValueCodec.decode(LMDBValueCodec.encode(value)).typeName == value.typeName) }
    }

    @Test func encodingIsCompact() {
        #expect(LMDBValueCodec.encode(.bool(true)) == [1, 0x01])
        #expect(LMDBValueCodec.encode(.int(1)) == [1, 0x02, 0x02])
        #expect(LMDBValueCodec.encode(.int(-1)) == [1, 0x02, 0x01])
        #expect(LMDBValueCodec.encode(.int(.min)).count == 2 + 10)
        #expect(LMDBValueCodec.encode(.double(1)).count == 2 + 8)
        #expect(LMDBValueCodec.encode(.string("dark")) == [1, 0x04, 4] + Array("dark".utf8))
    }

    @Test func equalDictionariesEncodeToEqualBytes() {
        var forward: [String: DefaultsValue] = [:]
        var backward: [String: DefaultsValue] = [:]
        for index in 0..<200 { forward["key\(index)"] = .int(Int64(index)) }
        for index in (0..<200).reversed() { backward["key\(index)"] = .int(Int64(index)) }
        #expect(LMDBValueCodec.encode(.dictionary(forward)) == LMDBValueCodec.encode(.dictionary(backward)))
    }

    // MARK: Bad input

    private func expectMalformed(_ bytes: [UInt8], _ comment: Comment? = nil, sourceLocation: SourceLocation = #_sourceLocation) {
        do {
            let value = try LMDBValueCodec.decode(bytes)
            Issue.record("decoded \(value.typeName) from bad bytes; \(comment?.rawValue ?? "")", sourceLocation: sourceLocation)
        } catch {
            #expect(error.kind == .malformed, comment, sourceLocation: sourceLocation)
        }
    }

    @Test func rejectsMalformedRecords() {
        expectMalformed([], "empty")
        expectMalformed([0, 0x01], "version 0")
        expectMalformed([1], "no value")
        expectMalformed([1, 0x09], "unknown tag")
        expectMalformed([1, 0xFF], "unknown tag")
        expectMalformed([1, 0x01, 0x00], "trailing bytes")
        expectMalformed([1, 0x02, 0x80, 0x00], "overlong varint")
        expectMalformed([1, 0x02] + [UInt8](repeating: 0xFF, count: 9) + [0x02], "varint over 64 bits")
        expectMalformed([1, 0x02] + [UInt8](repeating: 0x80, count: 11) + [0x01], "varint too long")
        expectMalformed([1, 0x03, 0, 0, 0], "short double")
        expectMalformed([1, 0x04, 0x02, 0xC3, 0x28], "invalid UTF-8")
        expectMalformed([1, 0x04, 0x05, 0x61], "string longer than the data")
        expectMalformed([1, 0x05] + [0xFF, 0xFF, 0xFF, 0xFF, 0xFF, 0xFF, 0xFF, 0xFF, 0x7F], "huge data length")
        expectMalformed([1, 0x07] + [0xFF, 0xFF, 0xFF, 0xFF, 0xFF, 0xFF, 0xFF, 0xFF, 0xFF, 0x01], "huge array count")
        expectMalformed([1, 0x07, 0x02, 0x01], "array missing an item")
        expectMalformed([1, 0x08, 0x01, 0x01, 0x61], "dictionary entry without a value")
        expectMalformed([1, 0x08, 0x02, 0x01, 0x61, 0x00, 0x01, 0x61, 0x01], "repeated dictionary key")
        expectMalformed([1, 0x08, 0x01, 0x02, 0xC3, 0x28, 0x00], "dictionary key not UTF-8")
    }

    @Test func newerVersionIsReportedAsSuch() {
        #expect(throws: BinaryCodecError.self) { try LMDBValueCodec.decode([2, 0x01]) }
        do {
            _ = try LMDBValueCodec.decode([2, 0x01])
        } catch {
            #expect(error.kind == .unknownVersion)
        }
    }

    @Test func nestingIsLimitedWithoutRecursion() throws {
        let limit = DefaultsValue.maximumNestingDepth
        func nested(_ depth: Int) -> [UInt8] {
            [1] + Array(repeating: [0x07, 0x01], count: depth - 1).flatMap { $0 } + [0x07, 0x00]
        }
        #expect(try LMDBValueCodec.decode(nested(limit)).nestingDepth == limit)
        expectMalformed(nested(limit + 1), "one level too deep")
        // Far deeper than any stack would take by recursion.
        expectMalformed(nested(1_000_000), "a million levels")
        let dictionaries: [UInt8] = [1] + Array(repeating: [0x08, 0x01, 0x00], count: 100_000).flatMap { $0 } + [0x00]
        expectMalformed(dictionaries, "deep dictionaries")
    }

    @Test func everyTruncationOfAValidRecordIsRejected() {
        for (name, value) in EdgeValues.all where name != "3 MiB data" && name != "long string" {
            let record = LMDBValueCodec.encode(value)
            let step = max(1, record.count / 300)
            for length in stride(from: 0, to: record.count, by: step) {
                expectMalformed(Array(record.prefix(length)), "\(name) cut at \(length)")
            }
        }
    }

    @Test func randomAndMutatedBytesNeverCrash() throws {
        var generator = SeededGenerator(state: 42)
        let samples = EdgeValues.all.filter { $0.name != "3 MiB data" && $0.name != "long string" }.map { LMDBValueCodec.encode($0.value) }
        var decodedCount = 0
        for round in 0..<20_000 {
            var bytes: [UInt8]
            if round.isMultiple(of: 2) {
                let length = Int.random(in: 0...48, using: &generator)
                bytes = (0..<length).map { _ in UInt8.random(in: 0...255, using: &generator) }
                if !bytes.isEmpty, round.isMultiple(of: 4) { bytes[0] = LMDBValueCodec.version }
            } else {
                bytes = samples[Int.random(in: 0..<samples.count, using: &generator)]
                for _ in 0..<Int.random(in: 1...3, using: &generator) {
                    let index = Int.random(in: 1..<bytes.count, using: &generator)
                    bytes[index] = UInt8.random(in: 0...255, using: &generator)
                }
            }
            // Whatever decodes must encode and decode to the same value again.
            if let value = try? LMDBValueCodec.decode(bytes) {
                decodedCount += 1
                #expect(try LMDBValueCodec.decode(LMDBValueCodec.encode(value)) == value)
            }
        }
        #expect(decodedCount > 0)
    }
}
