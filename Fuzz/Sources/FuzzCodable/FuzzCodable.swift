import AnyDefaultsCore
import Foundation
import FuzzerDriver

/// Any bytes, read as a small program that builds a `DefaultsValue` tree (up to 5 000 nodes and
/// 700 levels, beyond the nesting limit): decoding it into a range of Codable types throws a
/// `DefaultsError` or succeeds, and what succeeds encodes and decodes again to the same value.
/// One input in four is also handed to the JSON strategies as raw JSON.
@_cdecl("LLVMFuzzerTestOneInput")
public func fuzzCodable(_ start: UnsafePointer<UInt8>?, _ count: Int) -> CInt {
    let input = start.map { Array(UnsafeBufferPointer(start: $0, count: count)) } ?? []
    var reader = Input(bytes: input)
    let mode = reader.byte()
    let value = reader.value(depth: 0)
    check(Sample.self, value)
    check([Sample].self, value)
    check([String: Sample].self, value)
    check(Tree.self, value)
    check([String: Int].self, value)
    check([Double?].self, value)
    check(Set<String>.self, value)
    check([Kind: UInt8].self, value)
    check(Int16?.self, value)
    check(Date.self, value)
    check(Decimal.self, value)
    if mode % 4 == 0 {
        let json = Data(reader.rest)
        _ = try? DefaultsDecoder(strategy: .jsonData).decode(Sample.self, from: .data(json))
        _ = try? DefaultsDecoder(strategy: .jsonString).decode([Tree].self, from: .string(String(decoding: json, as: UTF8.self)))
    }
    return 0
}

/// Decodes `value` as `T`; if that works, the encoded result must decode again and encode to the
/// same value.
func check<T: Codable>(_ type: T.Type, _ value: DefaultsValue) {
    let decoded: T
    do {
        decoded = try DefaultsDecoder().decode(T.self, from: value, forKey: "fuzz")
    } catch {
        guard error.code == .decodingFailed || error.code == .typeMismatch else { fatalError("decoding threw \(error.code)") }
        return
    }
    guard let encoded = try? DefaultsEncoder().encode(decoded) else { return }
    do {
        let again = try DefaultsDecoder().decode(T.self, from: encoded)
        let reencoded = try DefaultsEncoder().encode(again)
        guard reencoded == encoded else { fatalError("\(T.self) does not encode the same after a round trip") }
    } catch {
        fatalError("\(T.self) encoded by DefaultsEncoder does not decode again: \(error)")
    }
}

enum Kind: String, Codable, CodingKeyRepresentable {
    case a, b, leaf
}

indirect enum Tree: Codable {
    case leaf(Int)
    case node([Tree])
}

struct Sample: Codable {
    var name: String
    var count: Int?
    var ratio: Double?
    var small: Int8?
    var unsigned: UInt64?
    var flags: [Bool]?
    var nested: [String: [Int16]]?
    var date: Date?
    var data: Data?
    var url: URL?
    var uuid: UUID?
    var kind: Kind?
    var tree: Tree?
    var float: Float?
    var children: [Sample]?
}

/// The bytes of one input, read front to back; past the end everything reads as zero.
struct Input {
    let bytes: [UInt8]
    var index = 0
    var nodes = 0

    static let names = ["name", "count", "ratio", "small", "unsigned", "flags", "nested", "date", "data", "url", "uuid",
                        "kind", "tree", "float", "children", "leaf", "node", "_0", "a", "b", ""]
    static let strings = ["a", "b", "leaf", "https://example.com/x?y=1", "file:///tmp/a b", "not a url \u{0}",
                          "2024-05-01T12:00:00Z", "E621E1F8-C36C-495A-93FC-0C247A3E6E5F", "1e400", "-0", "NaN", "true", "", "🔑"]

    mutating func byte() -> UInt8 {
        defer { index += 1 }
        return index < bytes.count ? bytes[index] : 0
    }

    mutating func word() -> UInt64 {
        (0..<8).reduce(0) { value, _ in value << 8 | UInt64(byte()) }
    }

    var rest: ArraySlice<UInt8> { index < bytes.count ? bytes[index...] : [] }

    mutating func text() -> String {
        let length = Int(byte() % 24)
        return String(decoding: (0..<length).map { _ in byte() }, as: UTF8.self)
    }

    mutating func value(depth: Int) -> DefaultsValue {
        nodes += 1
        let exhausted = index >= bytes.count || nodes > 5_000 || depth > 700
        switch byte() % (exhausted ? 6 : 12) {
        case 0: return .bool(byte() & 1 == 1)
        case 1: return .int(Int64(bitPattern: word()))
        case 2: return .double(Double(bitPattern: word()))
        case 3: return .string(Self.strings[Int(byte()) % Self.strings.count])
        case 4: return .int(Int64(Int8(bitPattern: byte())))
        case 5: return .date(Date(timeIntervalSinceReferenceDate: Double(bitPattern: word())))
        case 6: return .string(text())
        case 7: return .data(Data((0..<Int(byte() % 40)).map { _ in byte() }))
        case 8, 9:
            let count = Int(byte() % 6)
            return .array((0..<count).map { _ in value(depth: depth + 1) })
        default:
            let count = Int(byte() % 6)
            var entries: [String: DefaultsValue] = [:]
            for _ in 0..<count {
                let key = byte() & 0x80 == 0 ? Self.names[Int(byte()) % Self.names.count] : text()
                entries[key] = value(depth: depth + 1)
            }
            return .dictionary(entries)
        }
    }
}

@main
enum Main {
    static func main() { exit(anydefaults_fuzz_main(CommandLine.argc, CommandLine.unsafeArgv, fuzzCodable)) }
}
