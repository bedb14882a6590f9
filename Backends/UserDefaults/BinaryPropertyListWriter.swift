import Foundation

/// Writes ``PropertyListNode``s as a binary property list (`bplist00`) that Foundation, plain
/// `UserDefaults` and ``BinaryPropertyListReader`` read back exactly.
///
/// Unlike Foundation's encoders it never shares one object between equal values: they merge
/// `0.0` with `-0.0`, and canonically equivalent strings, because those compare equal, so a value
/// could come back as its look-alike. Every value gets its own object, bit for bit.
enum BinaryPropertyListWriter {
    /// One object of the file, with its children already numbered.
    private enum Object {
        case leaf(PropertyListNode)
        case array([Int])
        case dictionary(keys: [Int], values: [Int])
    }

    /// The binary property list of a top-level dictionary.
    static func write(_ dictionary: [String: PropertyListNode]) -> Data {
        var objects: [Object] = []
        _ = number(.dictionary(dictionary), into: &objects)
        let referenceSize = byteCount(for: UInt64(objects.count - 1))

        var bytes = BinaryPropertyListReader.magic
        var offsets: [Int] = []
        offsets.reserveCapacity(objects.count)
        for object in objects {
            offsets.append(bytes.count)
            append(object, referenceSize: referenceSize, to: &bytes)
        }
        let tableOffset = bytes.count
        let offsetSize = byteCount(for: UInt64(tableOffset))
        for offset in offsets { appendBigEndian(UInt64(offset), size: offsetSize, to: &bytes) }
        bytes += [0, 0, 0, 0, 0, 0, UInt8(offsetSize), UInt8(referenceSize)]
        appendBigEndian(UInt64(objects.count), size: 8, to: &bytes)
        appendBigEndian(0, size: 8, to: &bytes)
        appendBigEndian(UInt64(tableOffset), size: 8, to: &bytes)
        return Data(bytes)
    }

    /// Numbers `node` and its children, parents before children (each dictionary entry's key
    /// before its value), and returns its number. Without recursion, so that a value at the
    /// maximum depth is written on a thread with a small stack.
    private static func number(_ node: PropertyListNode, into objects: inout [Object]) -> Int {
        enum Task {
            case visit(PropertyListNode)
            case finishArray(index: Int, count: Int)
            case finishDictionary(index: Int, count: Int)
        }
        let first = objects.count
        var tasks: [Task] = [.visit(node)]
        // The numbers of visited nodes whose parent is not finished yet, in order.
        var numbers: [Int] = []
        while let task = tasks.popLast() {
            switch task {
            case .visit(let node):
                let index = objects.count
                objects.append(.leaf(node))
                numbers.append(index)
                switch node {
                case .array(let items):
                    tasks.append(.finishArray(index: index, count: items.count))
                    tasks.append(contentsOf: items.reversed().lazy.map { .visit($0) })
                case .dictionary(let items):
                    tasks.append(.finishDictionary(index: index, count: items.count))
                    for (key, value) in items.reversed() {
                        tasks.append(.visit(value))
                        tasks.append(.visit(.string(key)))
                    }
                default:
                    break
                }
            case .finishArray(let index, let count):
                objects[index] = .array(Array(numbers.suffix(count)))
                numbers.removeLast(count)
            case .finishDictionary(let index, let count):
                let children = Array(numbers.suffix(2 * count))
                numbers.removeLast(2 * count)
                objects[index] = .dictionary(
                    keys: stride(from: 0, to: children.count, by: 2).map { children[$0] },
                    values: stride(from: 1, to: children.count, by: 2).map { children[$0] })
            }
        }
        return first
    }

    private static func append(_ object: Object, referenceSize: Int, to bytes: inout [UInt8]) {
        switch object {
        case .array(let items):
            appendHeader(0xA0, count: items.count, to: &bytes)
            for item in items { appendBigEndian(UInt64(item), size: referenceSize, to: &bytes) }
        case .dictionary(let keys, let values):
            appendHeader(0xD0, count: keys.count, to: &bytes)
            for reference in keys + values { appendBigEndian(UInt64(reference), size: referenceSize, to: &bytes) }
        case .leaf(let node):
            appendLeaf(node, to: &bytes)
        }
    }

    private static func appendLeaf(_ node: PropertyListNode, to bytes: inout [UInt8]) {
        switch node {
        case .bool(let bool):
            bytes.append(bool ? 0x09 : 0x08)
        case .integer(let int):
            appendInteger(int, to: &bytes)
        case .unsignedInteger(let unsigned):
            // Above Int64.max: a 16-byte integer, as Foundation writes it.
            bytes.append(0x14)
            appendBigEndian(0, size: 8, to: &bytes)
            appendBigEndian(unsigned, size: 8, to: &bytes)
        case .real(let double):
            bytes.append(0x23)
            appendBigEndian(double.bitPattern, size: 8, to: &bytes)
        case .date(let date):
            bytes.append(0x33)
            appendBigEndian(date.timeIntervalSinceReferenceDate.bitPattern, size: 8, to: &bytes)
        case .data(let data):
            appendHeader(0x40, count: data.count, to: &bytes)
            bytes.append(contentsOf: data)
        case .string(let string):
            let utf8 = string.utf8
            if utf8.allSatisfy({ $0 < 0x80 }) {
                appendHeader(0x50, count: utf8.count, to: &bytes)
                bytes.append(contentsOf: utf8)
            } else {
                let units = Array(string.utf16)
                appendHeader(0x60, count: units.count, to: &bytes)
                for unit in units { appendBigEndian(UInt64(unit), size: 2, to: &bytes) }
            }
        case .array, .dictionary:
            // Numbered as containers, never as leaves.
            break
        }
    }

    /// An integer object: the smallest unsigned size for non-negative values below 2^32, else
    /// eight bytes, signed (the sizes Foundation reads as it means them).
    private static func appendInteger(_ int: Int64, to bytes: inout [UInt8]) {
        switch int {
        case 0...0xFF:
            bytes.append(0x10)
            appendBigEndian(UInt64(int), size: 1, to: &bytes)
        case 0...0xFFFF:
            bytes.append(0x11)
            appendBigEndian(UInt64(int), size: 2, to: &bytes)
        case 0...0xFFFF_FFFF:
            bytes.append(0x12)
            appendBigEndian(UInt64(int), size: 4, to: &bytes)
        default:
            bytes.append(0x13)
            appendBigEndian(UInt64(bitPattern: int), size: 8, to: &bytes)
        }
    }

    /// A marker with its element count: in the low nibble when below 15, else in an integer
    /// object that follows.
    private static func appendHeader(_ marker: UInt8, count: Int, to bytes: inout [UInt8]) {
        if count < 15 {
            bytes.append(marker | UInt8(count))
        } else {
            bytes.append(marker | 0x0F)
            appendInteger(Int64(count), to: &bytes)
        }
    }

    private static func byteCount(for value: UInt64) -> Int {
        switch value {
        case 0...0xFF: 1
        case 0...0xFFFF: 2
        case 0...0xFFFF_FFFF: 4
        default: 8
        }
    }

    private static func appendBigEndian(_ value: UInt64, size: Int, to bytes: inout [UInt8]) {
        for shift in stride(from: (size - 1) * 8, through: 0, by: -8) {
            bytes.append(UInt8(truncatingIfNeeded: value >> UInt64(shift)))
        }
    }
}
