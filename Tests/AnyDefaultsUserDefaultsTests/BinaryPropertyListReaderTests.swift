@testable import AnyDefaultsUserDefaults
import AnyDefaultsCore
import Foundation
import Testing

/// The binary property-list reader accepts what Foundation writes and refuses, without crashing
/// or running away, anything malformed.
@Suite struct BinaryPropertyListReaderTests {
    static func binary(_ object: Any) throws -> [UInt8] {
        Array(try PropertyListSerialization.data(fromPropertyList: object, format: .binary, options: 0))
    }

    @Test func readsWhatFoundationWrites() throws {
        let bytes = try Self.binary([
            "b": true, "i": -5, "big": UInt64.max, "r": 2.5, "f": Float(0.5), "s": "ascii", "u": "ünï😀",
            "d": Data([1, 2, 3]), "t": Date(timeIntervalSinceReferenceDate: 1.5), "a": [1, "x"] as [Any],
            "n": ["k": [String: Any]()],
        ] as [String: Any])
        #expect(try BinaryPropertyListReader.read(bytes) == .dictionary([
            "b": .bool(true), "i": .integer(-5), "big": .unsignedInteger(.max), "r": .real(2.5), "f": .real(0.5),
            "s": .string("ascii"), "u": .string("ünï😀"), "d": .data(Data([1, 2, 3])),
            "t": .date(Date(timeIntervalSinceReferenceDate: 1.5)), "a": .array([.integer(1), .string("x")]),
            "n": .dictionary(["k": .dictionary([:])]),
        ]))
    }

    @Test func everyTruncationAndEveryByteFlipIsRefusedOrReadSafely() throws {
        let valid = try Self.binary(["key": [1, 2.5, "text", Data([9]), ["inner": true]] as [Any], "other": "value"] as [String: Any])
        for length in 0..<valid.count {
            #expect(throws: BinaryPropertyListReader.Failure.self) { try BinaryPropertyListReader.read(Array(valid[..<length])) }
        }
        // Any single corrupted byte either still reads or is refused; neither crashes.
        for index in valid.indices {
            for replacement: UInt8 in [0x00, 0x0F, 0x7F, 0xAF, 0xDF, 0xFF] {
                var bytes = valid
                bytes[index] = replacement
                _ = try? BinaryPropertyListReader.read(bytes)
            }
        }
    }

    /// A file whose containers refer to themselves or share children, hand-assembled; `offsets`
    /// replaces the offset table's entries (written in `offsetSize` bytes each).
    static func assemble(objects: [[UInt8]], top: Int, offsets forced: [UInt64]? = nil, offsetSize: Int = 2, referenceSize: Int = 1) -> [UInt8] {
        var bytes = BinaryPropertyListReader.magic
        var offsets: [UInt64] = []
        for object in objects {
            offsets.append(UInt64(bytes.count))
            bytes += object
        }
        let table = bytes.count
        for offset in forced ?? offsets {
            bytes += (0..<offsetSize).reversed().map { UInt8(truncatingIfNeeded: offset >> ($0 * 8)) }
        }
        bytes += [0, 0, 0, 0, 0, 0, UInt8(offsetSize), UInt8(referenceSize)]
        for value in [objects.count, top, table] {
            bytes += (0..<8).reversed().map { UInt8(truncatingIfNeeded: value >> ($0 * 8)) }
        }
        return bytes
    }

    /// Every offset a file can hold, up to `UInt64.max`, is refused when out of range, never
    /// trapped on (an 8-byte offset above `Int.max` once stopped the process).
    @Test(arguments: [UInt64(Int.max), UInt64(Int.max) + 1, .max, 0, 7])
    func anyOffsetOutOfRangeIsRefused(_ offset: UInt64) throws {
        let objects: [[UInt8]] = [[0xD1, 1, 1], [0x51, UInt8(ascii: "k")]]
        let bytes = Self.assemble(objects: objects, top: 0, offsets: [offset, 11], offsetSize: 8)
        #expect(throws: BinaryPropertyListReader.Failure.self) { try BinaryPropertyListReader.read(bytes) }
        // The same file with its real offsets reads.
        let valid = Self.assemble(objects: objects, top: 0, offsets: [8, 11], offsetSize: 8)
        #expect(try BinaryPropertyListReader.read(valid) == .dictionary(["k": .string("k")]))
    }

    /// A data object of 64 KiB and an array that refers to it `count` times, in a file of about
    /// 64 KiB: each reference decodes a copy.
    static func sharedData(references count: Int, dataSize: Int = 64 << 10) -> [UInt8] {
        let data: [UInt8] = [0x4F, 0x12, UInt8(dataSize >> 24 & 0xFF), UInt8(dataSize >> 16 & 0xFF), UInt8(dataSize >> 8 & 0xFF), UInt8(dataSize & 0xFF)]
            + [UInt8](repeating: 7, count: dataSize)
        let array: [UInt8] = [0xAF, 0x11, UInt8(count >> 8), UInt8(count & 0xFF)]
            + (0..<count).flatMap { _ in [0, 3] as [UInt8] }
        let objects: [[UInt8]] = [[0xD1, 0, 2, 0, 1], array, [0x51, UInt8(ascii: "k")], data]
        return assemble(objects: objects, top: 0, offsetSize: 4, referenceSize: 2)
    }

    @Test func sharedStringsAndDataCannotExpandWithoutBound() throws {
        // 4,000 copies of 64 KiB: 256 MiB from a file of 72 KiB.
        #expect(throws: BinaryPropertyListReader.Failure.self) { try BinaryPropertyListReader.read(Self.sharedData(references: 4000)) }
        // Sharing within reason reads: 100 copies, 6.4 MiB.
        let shared = try BinaryPropertyListReader.read(Self.sharedData(references: 100))
        let copy = PropertyListNode.data(Data(repeating: 7, count: 64 << 10))
        #expect(shared == .dictionary(["k": .array(Array(repeating: copy, count: 100))]))
    }

    @Test func cyclesAndSharedContainersCannotRunAway() {
        // Object 0: a dictionary {"k": object 0} — a cycle.
        let cycle = Self.assemble(objects: [[0xD1, 1, 0], [0x51, UInt8(ascii: "k")]], top: 0)
        #expect(throws: BinaryPropertyListReader.Failure.self) { try BinaryPropertyListReader.read(cycle) }
        // Objects 1...40: arrays of two references to the next one — 2^40 nodes if expanded.
        var objects: [[UInt8]] = [[0xD1, 41, 1]]
        for next in 2...40 { objects.append([0xA2, UInt8(next), UInt8(next)]) }
        objects.append([0xA0])
        objects.append([0x51, UInt8(ascii: "k")])
        let bomb = Self.assemble(objects: objects, top: 0)
        #expect(throws: BinaryPropertyListReader.Failure.self) { try BinaryPropertyListReader.read(bomb) }
    }

    @Test func nestingIsLimitedToWhatASuiteHolds() throws {
        var deepest: DefaultsValue = .array([])
        for _ in 1..<DefaultsValue.maximumNestingDepth { deepest = .array([deepest]) }
        let accepted = BinaryPropertyListWriter.write(["k": PropertyListNode(deepest)])
        #expect(try BinaryPropertyListReader.read(Array(accepted)) == .dictionary(["k": PropertyListNode(deepest)]))
        let refused = BinaryPropertyListWriter.write(["k": PropertyListNode(.array([deepest]))])
        #expect(throws: BinaryPropertyListReader.Failure.self) { try BinaryPropertyListReader.read(Array(refused)) }
    }
}
