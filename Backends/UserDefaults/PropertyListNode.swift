import AnyDefaultsCore
import Foundation

#if canImport(Darwin)
import CoreFoundation
#endif

/// One value of a property list as a suite holds it: ``AnyDefaultsCore/DefaultsValue``'s cases
/// plus the integers above `Int64.max` that other software may write, so that a suite can be
/// rewritten without losing entries `DefaultsValue` cannot represent.
///
/// Foundation stores each case as the native type plain `UserDefaults` readers expect: `Bool`
/// (`CFBoolean`), integer and floating-point `CFNumber`s, `String`, `Data`, `Date`, arrays and
/// string-keyed dictionaries. Booleans, integers and reals stay distinct both ways.
///
/// Equality compares reals with `==` (so NaN differs from itself); compare ``defaultsValue``s
/// for the bit-exact equality of ``AnyDefaultsCore/DefaultsValue``.
enum PropertyListNode: Sendable, Equatable {
    case bool(Bool)
    case integer(Int64)
    /// An integer above `Int64.max`.
    case unsignedInteger(UInt64)
    case real(Double)
    case string(String)
    case data(Data)
    case date(Date)
    case array([PropertyListNode])
    case dictionary([String: PropertyListNode])

    /// The node that stores `value`.
    ///
    /// Built without recursion, like ``defaultsValue``, so that a value at the maximum depth
    /// converts on a thread with a small stack (the conformance suite's smallStack.maximumDepth).
    init(_ value: DefaultsValue) {
        var converted = TreeConversion<DefaultsValue, PropertyListNode>()
        self = converted.run(value) { value in
            switch value {
            case .bool(let bool): .leaf(.bool(bool))
            case .int(let int): .leaf(.integer(int))
            case .double(let double): .leaf(.real(double))
            case .string(let string): .leaf(.string(string))
            case .data(let data): .leaf(.data(data))
            case .date(let date): .leaf(.date(date))
            case .array(let items): .array(items)
            case .dictionary(let items): .dictionary(Array(items))
            }
        } array: { .array($0) } dictionary: { .dictionary($0) } ?? .array([])
    }

    /// The value this node holds, or `nil` if it holds an integer above `Int64.max`.
    var defaultsValue: DefaultsValue? {
        var converted = TreeConversion<PropertyListNode, DefaultsValue>()
        return converted.run(self) { node in
            switch node {
            case .bool(let bool): .leaf(.bool(bool))
            case .integer(let int): .leaf(.int(int))
            case .real(let double): .leaf(.double(double))
            case .string(let string): .leaf(.string(string))
            // Above Int64.max: no DefaultsValue holds it.
            case .unsignedInteger: .fail
            case .data(let data): .leaf(.data(data))
            case .date(let date): .leaf(.date(date))
            case .array(let items): .array(items)
            case .dictionary(let items): .dictionary(Array(items))
            }
        } array: { .array($0) } dictionary: { .dictionary($0) }
    }

    /// The entries of a suite's top-level dictionary that are valid keys with values
    /// `DefaultsValue` can hold, under canonical keys. The others are left out here (and left as
    /// they are in the suite).
    static func values(fromDomain domain: [String: PropertyListNode]) -> [String: DefaultsValue] {
        var values: [String: DefaultsValue] = [:]
        values.reserveCapacity(domain.count)
        for (key, node) in domain {
            guard let key = try? DefaultsValidation.canonicalKey(key, backend: UserDefaultsProvider.backend),
                let value = node.defaultsValue
            else { continue }
            values[key] = value
        }
        return values
    }
}

// MARK: Foundation objects

extension PropertyListNode {
    /// The Foundation object for this node, as `UserDefaults` and CFPreferences take it.
    var object: Any {
        switch self {
        case .bool(let bool): bool
        case .integer(let int): int
        case .real(let double): double
        case .string(let string): string
        case .unsignedInteger(let unsigned): unsigned
        case .data(let data): data
        case .date(let date): date
        case .array(let items): items.map { $0.object }
        case .dictionary(let items): items.mapValues { $0.object }
        }
    }

    /// The node for a property-list object from Foundation or CFPreferences, or `nil` for an
    /// object that is not of a property-list type or nests deeper than
    /// ``AnyDefaultsCore/DefaultsValue/maximumNestingDepth``.
    /// The node for a Foundation property-list object; `nil` for anything else, and, with
    /// `rejectingDuplicateKeys`, for a dictionary holding two keys equal after normalization.
    init?(object: Any, rejectingDuplicateKeys: Bool = false) {
        self.init(object: object, depth: 0, rejectingDuplicateKeys: rejectingDuplicateKeys)
    }

    private init?(object: Any, depth: Int, rejectingDuplicateKeys: Bool) {
        switch object {
        case let string as String:
            self = .string(string)
        case let data as Data:
            self = .data(data)
        case let date as Date:
            self = .date(date)
        case let number as NSNumber:
            // Swift's Bool, Int and Double arrive here too, bridged to NSNumber.
            self.init(number: number)
        case let array as [Any]:
            guard depth < DefaultsValue.maximumNestingDepth else { return nil }
            var items: [PropertyListNode] = []
            items.reserveCapacity(array.count)
            for element in array {
                guard let item = PropertyListNode(object: element, depth: depth + 1, rejectingDuplicateKeys: rejectingDuplicateKeys) else { return nil }
                items.append(item)
            }
            self = .array(items)
        case let dictionary as [String: Any]:
            guard depth < DefaultsValue.maximumNestingDepth else { return nil }
            var items: [String: PropertyListNode] = [:]
            items.reserveCapacity(dictionary.count)
            for (key, element) in dictionary {
                guard let item = PropertyListNode(object: element, depth: depth + 1, rejectingDuplicateKeys: rejectingDuplicateKeys)
                else { return nil }
                // Assignment, not `uniqueKeysWithValues`: canonically equivalent keys are equal
                // Strings, and a file may hold both spellings (refused only when asked).
                if items.updateValue(item, forKey: key) != nil, rejectingDuplicateKeys { return nil }
            }
            self = .dictionary(items)
        default:
            return nil
        }
    }

    /// Tells booleans, integers and reals apart by what the number is, never by what it converts
    /// to: `NSNumber(value: 1) as? Bool` and `NSNumber(value: 1.0) as? Int64` both succeed, so a
    /// cast would turn an integer 1 into `true`.
    init(number: NSNumber) {
        if Self.isBoolean(number) {
            self = .bool(number.boolValue)
            return
        }
        switch UInt8(bitPattern: number.objCType.pointee) {
        case UInt8(ascii: "d"), UInt8(ascii: "f"):
            // A Float widens to Double exactly.
            self = .real(number.doubleValue)
        case UInt8(ascii: "Q"):
            let unsigned = number.uint64Value
            self = unsigned <= UInt64(Int64.max) ? .integer(Int64(unsigned)) : .unsignedInteger(unsigned)
        default:
            self = .integer(number.int64Value)
        }
    }

    /// Whether `number` is a `CFBoolean` rather than a `CFNumber`.
    static func isBoolean(_ number: NSNumber) -> Bool {
        #if canImport(Darwin)
        return CFGetTypeID(number) == CFBooleanGetTypeID()
        #else
        // swift-corelibs-foundation keeps exactly two boolean NSNumbers, the CFBoolean singletons
        // that `NSNumber(value:)` returns for `true` and `false`. (The objCType "c" would not do
        // on Apple platforms, where an Int8 number reports "c" too.)
        return number === NSNumber(value: true) || number === NSNumber(value: false)
        #endif
    }
}
