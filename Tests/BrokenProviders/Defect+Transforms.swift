import AnyDefaultsCore
import Foundation

/// How each defect bends keys, values and checks; `.none` leaves them as the contract says.
extension Defect {
    /// The key as the provider stores it.
    func storageKey(_ key: String) throws(DefaultsError) -> RawKey {
        if key.isEmpty, self != .acceptsEmptyKey {
            throw DefaultsError(.invalidKey, "A key must not be empty.", backend: StoreFile.backend, key: key)
        }
        var stored = self == .ignoresCanonicalEquivalence ? key : key.precomposedStringWithCanonicalMapping
        switch self {
        case .foldsCompatibilityKeys: stored = stored.precomposedStringWithCompatibilityMapping
        case .foldsNonASCIICase: if !stored.utf8.allSatisfy({ $0 < 0x80 }) { stored = stored.lowercased() }
        case .stripsAccentsFromKeys: stored = stored.folding(options: .diacriticInsensitive, locale: nil)
        case .percentDecodesKeys: stored = stored.removingPercentEncoding ?? stored
        case .trimsKeys: stored = stored.trimmingCharacters(in: .whitespacesAndNewlines)
        case .cutsKeysAtNUL: stored = String(stored.unicodeScalars.prefix { $0 != "\0" })
        case .truncatesLongKeys where stored.utf8.count > 4_096:
            var cut = String.UnicodeScalarView()
            var bytes = 0
            for scalar in stored.unicodeScalars {
                bytes += String(scalar).utf8.count
                if bytes > 4_096 { break }
                cut.append(scalar)
            }
            stored = String(cut)
        case .rejectsLongKeysWithIOFailure where stored.utf8.count > 8_192:
            throw DefaultsError(.ioFailure, "The record could not be written.", backend: StoreFile.backend, key: key)
        default: break
        }
        return RawKey(stored)
    }

    /// Checks a value before it is stored; throws the error the defect makes of a bad one.
    func check(_ value: DefaultsValue?, key: String) throws(DefaultsError) {
        guard let value else { return }
        let depth = self == .checksDepthOfFirstBranchOnly ? Self.firstBranchDepth(value) : value.nestingDepth
        let limit = DefaultsValue.maximumNestingDepth - (self == .rejectsMaximumDepth ? 1 : 0)
        guard depth > limit else { return }
        var message = "The value nests more than \(limit) levels deep."
        if self == .errorShowsValuePrefix { message += " It begins \(String("\(value)".prefix(60)))." }
        throw DefaultsError(self == .tooDeepIsIOFailure ? .ioFailure : .invalidValue, message, backend: StoreFile.backend, key: key)
    }

    /// The error for the empty key, which one defect decorates with the end of the value.
    func emptyKeyError(for value: DefaultsValue?) -> DefaultsError {
        var error = DefaultsError(.invalidKey, "A key must not be empty.", backend: StoreFile.backend, key: "")
        if self == .errorCauseShowsValueSuffix, let value {
            error.cause = NSError(domain: "BrokenFile", code: 1, userInfo: [NSLocalizedDescriptionKey: "while storing …\(String("\(value)".suffix(40)))"])
        }
        return error
    }

    /// The depth of a value measured along the first child of each container only.
    static func firstBranchDepth(_ value: DefaultsValue) -> Int {
        var depth = 0
        var current = value
        while true {
            switch current {
            case .array(let items):
                depth += 1
                guard let first = items.first else { return depth }
                current = first
            case .dictionary(let items):
                depth += 1
                guard let first = items.sorted(by: { $0.key < $1.key }).first?.value else { return depth }
                current = first
            default: return depth
            }
        }
    }

    /// Whether the defect changes values on their way in or out (walking them recursively).
    var changesValues: Bool { group == .roundTrips || self == .storesBoolsAsIntegers }

    /// The value as the provider stores it.
    func stored(_ value: DefaultsValue, depth: Int = 0) -> DefaultsValue {
        guard changesValues else { return value }
        switch value {
        case .date(let date) where self == .dropsDateType: return .double(date.timeIntervalSinceReferenceDate)
        case .bool(let flag) where self == .storesBoolsAsIntegers: return .int(flag ? 1 : 0)
        case .date(let date) where self == .nestedDatesMilliseconds && depth > 0:
            return .date(Date(timeIntervalSinceReferenceDate: (date.timeIntervalSinceReferenceDate * 1000).rounded() / 1000))
        case .double(let double) where self == .losesDoublePrecision: return .double(Double(Float(double)))
        case .double(let double) where self == .nestedNegativeZeroCollapsed && depth > 0 && double == 0: return .double(0)
        case .double(let double) where self == .nestedDoublesFifteenDigits && depth > 0 && double.isFinite:
            return .double(Double(String(format: "%.15g", double)) ?? double)
        case .int(let int) where self == .nestedIntegersThroughDouble && depth > 0:
            let double = Double(int)
            return .int(double >= 9.2e18 ? .max : (double <= -9.2e18 ? .min : Int64(double)))
        case .string(let text):
            switch self {
            case .normalizesStringValues: return .string(text.precomposedStringWithCanonicalMapping)
            case .trimsStringValues: return .string(text.trimmingCharacters(in: .whitespacesAndNewlines))
            case .normalizesNewlines: return .string(text.replacingOccurrences(of: "\r\n", with: "\n").replacingOccurrences(of: "\r", with: "\n"))
            case .dropsByteOrderMark where text.unicodeScalars.first == "\u{FEFF}": return .string(String(text.unicodeScalars.dropFirst()))
            case .truncatesLargeStrings where text.utf8.count > 131_072:
                return .string(String(decoding: text.utf8.prefix(131_072), as: UTF8.self))
            default: return value
            }
        case .array(var items):
            if self == .truncatesLargeArrays, items.count > 65_535 { items = Array(items.prefix(items.count % 65_536)) }
            return .array(items.map { stored($0, depth: depth + 1) })
        case .dictionary(let items):
            return .dictionary(items.mapValues { stored($0, depth: depth + 1) })
        default: return value
        }
    }

    /// The stored value as the provider reads it back.
    func read(_ value: DefaultsValue) -> DefaultsValue {
        guard changesValues else { return value }
        switch (self, value) {
        case (.readsDateTagAsDate, .dictionary(let items)) where items.count == 1:
            if case .double(let seconds)? = items["$date"] { return .date(Date(timeIntervalSinceReferenceDate: seconds)) }
            return .dictionary(items.mapValues(read))
        case (.readsUIDDictionaryAsInteger, .dictionary(let items)) where items.count == 1:
            if case .int(let number)? = items["CF$UID"] { return .int(number) }
            return .dictionary(items.mapValues(read))
        case (.decodesDataThatLooksEncoded, .data(let data)):
            let bytes = Array(data)
            if let decoded = try? bytes.withUnsafeBytes({ buffer throws(BinaryCodecError) in try BinaryValueCodec.decode(buffer) }) {
                switch decoded {
                case .array, .dictionary: return decoded
                default: return value
                }
            }
            return value
        case (_, .array(let items)) where self == .readsDateTagAsDate || self == .readsUIDDictionaryAsInteger:
            return .array(items.map(read))
        case (_, .dictionary(let items)) where self == .readsDateTagAsDate || self == .readsUIDDictionaryAsInteger:
            return .dictionary(items.mapValues(read))
        default:
            return value
        }
    }

    /// Whether removing `key` also removes `other`.
    func removal(of key: RawKey, removes other: RawKey) -> Bool {
        switch self {
        case .removesByPrefix: return other.string.hasPrefix(key.string)
        case .removesByPattern: return Self.like(Array(other.string.unicodeScalars), Array(key.string.unicodeScalars))
        default: return other == key
        }
    }

    /// SQL LIKE: `%` any run, `_` any one character.
    static func like(_ text: [Unicode.Scalar], _ pattern: [Unicode.Scalar]) -> Bool {
        var memo: [[Bool?]] = Array(repeating: Array(repeating: nil, count: pattern.count + 1), count: text.count + 1)
        func match(_ t: Int, _ p: Int) -> Bool {
            if let known = memo[t][p] { return known }
            let result: Bool
            if p == pattern.count {
                result = t == text.count
            } else if pattern[p] == "%" {
                result = match(t, p + 1) || (t < text.count && match(t + 1, p))
            } else {
                result = t < text.count && (pattern[p] == "_" || pattern[p] == text[t]) && match(t + 1, p + 1)
            }
            memo[t][p] = result
            return result
        }
        return match(0, 0)
    }

    /// Walks a value recursively with a 4 KiB frame per level, as an encoder with large locals
    /// does: a value at the maximum depth needs 2 MiB of stack.
    static func walkWithLargeFrames(_ value: DefaultsValue) -> Int {
        var frame: Frame512 = (zero64, zero64, zero64, zero64, zero64, zero64, zero64, zero64)
        return withUnsafeMutableBytes(of: &frame) { bytes in
            bytes[bytes.count - 1] = 1
            var sum = Int(bytes[bytes.count - 1])
            switch value {
            case .array(let items): for item in items { sum += walkWithLargeFrames(item) }
            case .dictionary(let items): for item in items.values { sum += walkWithLargeFrames(item) }
            default: break
            }
            return sum + Int(bytes[0])
        }
    }
}

typealias Frame8 = (UInt64, UInt64, UInt64, UInt64, UInt64, UInt64, UInt64, UInt64)
typealias Frame64 = (Frame8, Frame8, Frame8, Frame8, Frame8, Frame8, Frame8, Frame8)
typealias Frame512 = (Frame64, Frame64, Frame64, Frame64, Frame64, Frame64, Frame64, Frame64)
private let zero8: Frame8 = (0, 0, 0, 0, 0, 0, 0, 0)
private let zero64: Frame64 = (zero8, zero8, zero8, zero8, zero8, zero8, zero8, zero8)

extension Defect {
    /// Whether a stored value counts as the expected one in a comparison: exactly, or, for
    /// ``comparesNumbersByValue``, numbers of either kind by their numeric value.
    public func sameForComparison(_ stored: DefaultsValue?, _ expected: DefaultsValue?) -> Bool {
        switch self {
        case .comparesNestedNumbersByValue, .comparesStringsCanonically, .compareAndSetNaNNeverMatches:
            guard let stored, let expected else { return stored == nil && expected == nil }
            return looselyEqual(stored, expected, depth: 0)
        default: break
        }
        guard self == .comparesNumbersByValue else { return stored == expected }
        func number(_ value: DefaultsValue?) -> Double? {
            switch value {
            case .int(let int)?: Double(int)
            case .double(let double)?: double
            default: nil
            }
        }
        if let left = number(stored), let right = number(expected) { return left == right }
        return stored == expected
    }
}

extension Defect {
    /// Equality as the defects that compare loosely see it (a hand-written comparison):
    /// ``comparesNestedNumbersByValue`` compares numbers inside containers by their numeric value
    /// (as PostgreSQL's jsonb `=` does), ``comparesStringsCanonically`` compares strings and
    /// dictionary keys with Swift's `==`, ``compareAndSetNaNNeverMatches`` compares doubles with
    /// IEEE `==` and the sign of zero, ``noOpCheckMergesEquivalentStrings`` compares strings inside
    /// containers (not at top level) with Swift's `==`. Everything else exactly.
    func looselyEqual(_ a: DefaultsValue, _ b: DefaultsValue, depth: Int) -> Bool {
        switch (a, b) {
        case (.int(let x), .double(let y)) where self == .comparesNestedNumbersByValue && depth > 0: return Double(x) == y
        case (.double(let x), .int(let y)) where self == .comparesNestedNumbersByValue && depth > 0: return x == Double(y)
        case (.double(let x), .double(let y)):
            if self == .comparesNestedNumbersByValue && depth > 0 { return x == y }
            if self == .compareAndSetNaNNeverMatches { return x == y && x.sign == y.sign }
            return a == b
        case (.string(let x), .string(let y)):
            if self == .comparesStringsCanonically || (self == .noOpCheckMergesEquivalentStrings && depth > 0) { return x == y }
            return a == b
        case (.array(let x), .array(let y)):
            return x.count == y.count && zip(x, y).allSatisfy { looselyEqual($0, $1, depth: depth + 1) }
        case (.dictionary(let x), .dictionary(let y)):
            let canonicalKeys = self == .comparesStringsCanonically || self == .noOpCheckMergesEquivalentStrings
            guard x.count == y.count else { return false }
            for (key, value) in x {
                // Swift's dictionary finds a key under any canonically equivalent spelling.
                guard let index = y.index(forKey: key) else { return false }
                if !canonicalKeys, !y[index].key.unicodeScalars.elementsEqual(key.unicodeScalars) { return false }
                if !looselyEqual(value, y[index].value, depth: depth + 1) { return false }
            }
            return true
        default: return a == b
        }
    }

    /// A prefix query's match, ASCII letters folded (``prefixIgnoresASCIICase``): SQLite's `LIKE`
    /// with its wildcards escaped.
    static func startsIgnoringASCIICase(_ key: String, _ prefix: String) -> Bool {
        func folded(_ text: String) -> [UInt32] {
            text.precomposedStringWithCanonicalMapping.unicodeScalars.map { (65...90).contains($0.value) ? $0.value + 32 : $0.value }
        }
        return folded(key).starts(with: folded(prefix))
    }
}
