import AnyDefaultsCore
import Foundation
import Testing

/// The binary encoding shared by the SQLite (containers) and LMDB (every value) backends: its
/// bytes are a storage format, so they are pinned here.
@Suite struct BinaryValueCodecTests {
    func decode(_ bytes: [UInt8]) throws(BinaryCodecError) -> DefaultsValue {
        try bytes.withBytes { buffer throws(BinaryCodecError) in try BinaryValueCodec.decode(buffer) }
    }

    @Test func theBytesOfANestedValueAreFixed() throws {
        let value = DefaultsValue.dictionary(["b": .array([.int(-1), .bool(true)]), "a": .string("x"), "é": .double(-0.0)])
        let expected: [UInt8] =
            [0x08, 3, 1, 0x61, 0x04, 1, 0x78, 1, 0x62, 0x07, 2, 0x02, 0x01, 0x01, 2, 0xC3, 0xA9, 0x03]
            + [0, 0, 0, 0, 0, 0, 0, 0x80]
        #expect(BinaryValueCodec.encode(value) == expected)
        #expect(try decode(expected) == value)
    }

    @Test func valuesRoundTripExactly() throws {
        let values: [DefaultsValue] = [
            .int(.min), .int(.max), .int(0), .double(.nan), .double(-.infinity), .string(""), .string("🙂"),
            .data(Data(repeating: 7, count: 300)), .date(Date(timeIntervalSinceReferenceDate: -0.5)),
            .array([.array([]), .dictionary([:])]), .dictionary(["k": .dictionary(["k": .int(1)])]),
        ]
        for value in values {
            #expect(try decode(BinaryValueCodec.encode(value)) == value, "\(value)")
        }
    }

    @Test(arguments: [
        [0x02, 0x80, 0x00],           // an int not in its shortest form
        [0x08, 2, 1, 0x61, 0x01, 1, 0x61, 0x00],  // the same key twice
        [0x04, 5, 0x61],              // a string longer than the bytes left
        [0x04, 1, 0xFF],              // invalid UTF-8
        [0x07, 0xFF, 0xFF, 0xFF, 0x7F],  // a count the bytes cannot hold
        [0x09],                       // an unknown tag
        [0x01, 0x01],                 // bytes after the value
        [],
    ] as [[UInt8]])
    func damagedBytesAreRejected(bytes: [UInt8]) {
        #expect(throws: BinaryCodecError.self) { try decode(bytes) }
    }

    @Test func nestingIsLimited() throws {
        /// Arrays of one item nested `depth` deep around `false`.
        func nested(_ depth: Int) -> [UInt8] {
            Array(repeating: [UInt8]([0x07, 1]), count: depth).flatMap { $0 } + [0x00]
        }
        let limit = DefaultsValue.maximumNestingDepth
        #expect(try decode(nested(limit)).nestingDepth == limit)
        #expect(throws: BinaryCodecError.self) { try decode(nested(limit + 1)) }
    }

    /// Containers with many items decode in time proportional to their size: each item used to
    /// copy its whole container (items held in an enum payload are copied on append), so a
    /// 70 000-item array (the conformance suite's roundTrips.large) took minutes to read.
    @Test func largeContainersRoundTrip() throws {
        let array = DefaultsValue.array((0..<300_000).map { .int(Int64($0)) })
        let dictionary = DefaultsValue.dictionary(Dictionary(uniqueKeysWithValues: (0..<150_000).map { ("k\($0)", DefaultsValue.int(Int64($0))) }))
        let nested = DefaultsValue.array([array, dictionary, .array([dictionary])])
        #expect(try decode(BinaryValueCodec.encode(nested)) == nested)
    }
}
