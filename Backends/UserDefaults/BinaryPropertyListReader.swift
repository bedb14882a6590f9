import AnyDefaultsCore
import Foundation

/// Reads a binary property list (`bplist00`) into ``PropertyListNode``s, keeping exactly what the
/// file says a value is (a boolean, an integer, a real, a date ...), and rejecting rather than
/// trusting anything malformed: every offset and length is checked, nesting is limited to what
/// a suite can hold, and shared or cyclic references cannot make it expand without bound.
///
/// It exists because Foundation's `PropertyListSerialization` on Linux takes a large fraction of a
/// second for a few megabytes of data, and every write reads the suite again.
struct BinaryPropertyListReader {
    /// Why the data is not a binary property list this reader accepts.
    struct Failure: Error, Sendable, CustomStringConvertible {
        var description: String
    }

    private let bytes: [UInt8]
    private let offsetTable: Int
    private let offsetSize: Int
    private let referenceSize: Int
    private let objectCount: Int
    /// How many more objects may be decoded; a file cannot legitimately hold more than it has
    /// bytes, however often it refers to one object.
    private var budget: Int
    /// How many more bytes of strings and data may be decoded. Each reference to a string or data
    /// object decodes a copy of it, so a small file that refers to one large object many times
    /// would otherwise expand without bound; a file may expand to 16 times its size, or 64 MiB.
    private var byteBudget: Int

    /// The deepest nesting accepted: the suite's top-level dictionary, plus values nested as deep
    /// as ``AnyDefaultsCore/DefaultsValue/maximumNestingDepth``.
    static let maximumDepth = DefaultsValue.maximumNestingDepth + 1

    static let magic = Array("bplist00".utf8)

    /// Whether a dictionary naming a key twice (or two keys equal after normalization) is refused
    /// rather than read with the last of them.
    private var rejectsDuplicateKeys = false

    /// The top-level object of `bytes`; with `rejectingDuplicateKeys`, a dictionary that names a
    /// key twice is refused.
    static func read(_ bytes: [UInt8], rejectingDuplicateKeys: Bool = false) throws(Failure) -> PropertyListNode {
        var reader = try BinaryPropertyListReader(bytes)
        reader.rejectsDuplicateKeys = rejectingDuplicateKeys
        let top = try reader.topObject()
        return try reader.tree(top)
    }

    private init(_ bytes: [UInt8]) throws(Failure) {
        guard bytes.count >= Self.magic.count + 32, bytes.starts(with: Self.magic) else {
            throw Failure(description: "not a binary property list")
        }
        self.bytes = bytes
        let trailer = bytes.count - 32
        offsetSize = Int(bytes[trailer + 6])
        referenceSize = Int(bytes[trailer + 7])
        guard (1...8).contains(offsetSize), (1...8).contains(referenceSize) else {
            throw Failure(description: "invalid integer sizes in the trailer")
        }
        let count = Self.unsigned(bytes, at: trailer + 8, size: 8)
        let table = Self.unsigned(bytes, at: trailer + 24, size: 8)
        guard count >= 1, table >= UInt64(Self.magic.count), table <= UInt64(trailer),
            count <= (UInt64(trailer) - table) / UInt64(offsetSize)
        else { throw Failure(description: "the offset table does not fit the file") }
        objectCount = Int(count)
        offsetTable = Int(table)
        budget = bytes.count
        byteBudget = max(bytes.count, 4 << 20) * 16
    }

    private func topObject() throws(Failure) -> Int {
        let top = Self.unsigned(bytes, at: bytes.count - 32 + 16, size: 8)
        guard top < UInt64(objectCount) else { throw Failure(description: "the top object is out of range") }
        return Int(top)
    }

    // MARK: Objects

    /// The object `top` with everything it refers to, read without recursion (an explicit stack),
    /// so that a value at the maximum depth is read on a thread with a small stack.
    private mutating func tree(_ top: Int) throws(Failure) -> PropertyListNode {
        enum Task {
            case read(Int, depth: Int)
            case makeArray(count: Int)
            case makeDictionary(count: Int, depth: Int)
        }
        var tasks: [Task] = [.read(top, depth: 0)]
        var done: [PropertyListNode] = []
        while let task = tasks.popLast() {
            switch task {
            case .read(let index, let depth):
                switch try object(index, depth: depth) {
                case .node(let node):
                    done.append(node)
                case .array(let references):
                    tasks.append(.makeArray(count: references.count))
                    tasks.append(contentsOf: references.reversed().lazy.map { .read($0, depth: depth + 1) })
                case .dictionary(let references):
                    // Keys first, then values, as the file lists them.
                    tasks.append(.makeDictionary(count: references.count / 2, depth: depth))
                    tasks.append(contentsOf: references.reversed().lazy.map { .read($0, depth: depth + 1) })
                }
            case .makeArray(let count):
                let items = Array(done.suffix(count))
                done.removeLast(count)
                done.append(.array(items))
            case .makeDictionary(let count, let depth):
                let parts = Array(done.suffix(2 * count))
                done.removeLast(2 * count)
                var items: [String: PropertyListNode] = [:]
                items.reserveCapacity(count)
                for entry in 0..<count {
                    guard case .string(let key) = parts[entry] else {
                        throw Failure(description: "a dictionary key is not a string")
                    }
                    if items.updateValue(parts[count + entry], forKey: key) != nil, rejectsDuplicateKeys {
                        // A key inside a value is part of the value, which may be a secret: not named.
                        throw Failure(description: depth == 0 ? "the key \(key.debugDescription) appears more than once" : "a dictionary names a key more than once")
                    }
                }
                done.append(.dictionary(items))
            }
        }
        guard let root = done.last else { throw Failure(description: "no top object") }
        return root
    }

    /// One object: a finished node, or a container with the references of its items (a
    /// dictionary's keys, then its values).
    private enum Object {
        case node(PropertyListNode)
        case array([Int])
        case dictionary([Int])
    }

    private mutating func object(_ index: Int, depth: Int) throws(Failure) -> Object {
        budget -= 1
        guard budget >= 0 else { throw Failure(description: "more objects than the file can hold") }
        // Checked as read, before it becomes an `Int`: an 8-byte offset may exceed `Int.max`.
        let offset = Self.unsigned(bytes, at: offsetTable + index * offsetSize, size: offsetSize)
        guard offset >= UInt64(Self.magic.count), offset < UInt64(offsetTable) else {
            throw Failure(description: "an object offset is out of range")
        }
        let start = Int(offset)
        let marker = bytes[start]
        let low = Int(marker & 0x0F)
        switch marker >> 4 {
        case 0x0:
            switch marker {
            case 0x08: return .node(.bool(false))
            case 0x09: return .node(.bool(true))
            default: throw Failure(description: "unsupported object type 0x\(String(marker, radix: 16))")
            }
        case 0x1:
            return .node(try integer(at: start + 1, size: 1 << low))
        case 0x2:
            switch low {
            case 2: return .node(.real(Double(Float(bitPattern: UInt32(try field(start + 1, size: 4))))))
            case 3: return .node(.real(Double(bitPattern: try field(start + 1, size: 8))))
            default: throw Failure(description: "a real of an unsupported size")
            }
        case 0x3:
            guard low == 3 else { throw Failure(description: "a date of an unsupported size") }
            return .node(.date(Date(timeIntervalSinceReferenceDate: Double(bitPattern: try field(start + 1, size: 8)))))
        case 0x4:
            let (count, first) = try length(at: start)
            try spend(bytes: count)
            return .node(.data(Data(try slice(first, count: count))))
        case 0x5:
            let (count, first) = try length(at: start)
            // ASCII by the format; any byte above 0x7F is taken as Latin-1 rather than refused.
            try spend(bytes: count)
            return .node(.string(String(String.UnicodeScalarView(try slice(first, count: count).map { Unicode.Scalar($0) }))))
        case 0x6:
            let (count, first) = try length(at: start)
            guard count <= Int.max / 2 else { throw Failure(description: "a string length is out of range") }
            let raw = try slice(first, count: count * 2)
            try spend(bytes: count * 2)
            let units = stride(from: raw.startIndex, to: raw.endIndex, by: 2).map {
                UInt16(raw[$0]) << 8 | UInt16(raw[$0 + 1])
            }
            return .node(.string(String(decoding: units, as: UTF16.self)))
        case 0x8:
            // A keyed-archiver UID, written as Foundation's XML writer spells it.
            guard low < 8 else { throw Failure(description: "a UID of an unsupported size") }
            return .node(.dictionary(["CF$UID": .integer(Int64(bitPattern: try field(start + 1, size: low + 1)))]))
        case 0xA:
            guard depth < Self.maximumDepth else { throw Failure(description: "nested too deeply") }
            let (count, first) = try length(at: start)
            return .array(try self.references(first, count: count))
        case 0xD:
            guard depth < Self.maximumDepth else { throw Failure(description: "nested too deeply") }
            let (count, first) = try length(at: start)
            guard count <= Int.max / 2 else { throw Failure(description: "a dictionary size is out of range") }
            return .dictionary(try self.references(first, count: count * 2))
        default:
            throw Failure(description: "unsupported object type 0x\(String(marker, radix: 16))")
        }
    }

    /// An integer object's value: 1, 2 and 4 bytes are unsigned, 8 bytes signed, 16 bytes a
    /// signed 128-bit integer (which Foundation uses for values above `Int64.max`).
    private func integer(at start: Int, size: Int) throws(Failure) -> PropertyListNode {
        switch size {
        case 1, 2, 4:
            return .integer(Int64(try field(start, size: size)))
        case 8:
            return .integer(Int64(bitPattern: try field(start, size: 8)))
        case 16:
            let high = try field(start, size: 8)
            let low = try field(start + 8, size: 8)
            if high == 0 {
                return low <= UInt64(Int64.max) ? .integer(Int64(low)) : .unsignedInteger(low)
            }
            if high == .max, Int64(bitPattern: low) < 0 { return .integer(Int64(bitPattern: low)) }
            throw Failure(description: "an integer beyond 64 bits")
        default:
            throw Failure(description: "an integer of an unsupported size")
        }
    }

    /// The element count of a data, string, array or dictionary object starting at `start`, and
    /// where its content begins.
    private func length(at start: Int) throws(Failure) -> (count: Int, first: Int) {
        let low = Int(bytes[start] & 0x0F)
        if low != 0x0F { return (low, start + 1) }
        let marker = try field(start + 1, size: 1)
        guard marker >> 4 == 0x1, marker & 0x0F <= 3 else { throw Failure(description: "a malformed length") }
        let size = 1 << Int(marker & 0x0F)
        let count = try field(start + 2, size: size)
        guard count <= UInt64(offsetTable) else { throw Failure(description: "a length is out of range") }
        return (Int(count), start + 2 + size)
    }

    private func references(_ first: Int, count: Int) throws(Failure) -> [Int] {
        guard count <= Int.max / referenceSize else { throw Failure(description: "a container size is out of range") }
        _ = try slice(first, count: count * referenceSize)
        var result: [Int] = []
        result.reserveCapacity(count)
        for entry in 0..<count {
            let reference = Self.unsigned(bytes, at: first + entry * referenceSize, size: referenceSize)
            guard reference < UInt64(objectCount) else { throw Failure(description: "a reference is out of range") }
            result.append(Int(reference))
        }
        return result
    }

    // MARK: Bytes

    /// Charges a decoded string's or data's length against ``byteBudget``.
    private mutating func spend(bytes count: Int) throws(Failure) {
        byteBudget -= count
        guard byteBudget >= 0 else { throw Failure(description: "its strings and data expand to more than 16 times the file's size") }
    }

    /// `count` bytes from `first`, which must lie before the offset table.
    private func slice(_ first: Int, count: Int) throws(Failure) -> ArraySlice<UInt8> {
        guard count >= 0, first <= offsetTable, count <= offsetTable - first else {
            throw Failure(description: "an object runs past its data")
        }
        return bytes[first..<(first + count)]
    }

    /// A big-endian unsigned field of `size` bytes at `start`, inside the object data.
    private func field(_ start: Int, size: Int) throws(Failure) -> UInt64 {
        _ = try slice(start, count: size)
        return Self.unsigned(bytes, at: start, size: size)
    }

    /// A big-endian unsigned integer of `size` (1...8) bytes; the caller has checked the range.
    private static func unsigned(_ bytes: [UInt8], at start: Int, size: Int) -> UInt64 {
        var value: UInt64 = 0
        for index in start..<(start + size) { value = value << 8 | UInt64(bytes[index]) }
        return value
    }
}
