import AnyDefaultsCore
import Foundation

#if canImport(Darwin)
import CoreFoundation
#endif

/// Converts between ``DefaultsValue`` and the property-list objects Foundation keeps in a
/// preferences domain: `Bool`, `Int64`, `Double`, `String`, `Data`, `Date`, arrays and
/// string-keyed dictionaries — the values any plain `UserDefaults` reader expects.
enum PropertyListMapping {
    /// The property-list object for `value`.
    ///
    /// Booleans, integers and doubles stay distinct: Foundation turns them into a `CFBoolean`, an
    /// integer `CFNumber` and a floating-point `CFNumber`, which a binary property list stores as
    /// `true`/`false`, an 8-byte integer and an 8-byte real, bit for bit.
    static func object(for value: DefaultsValue) -> Any {
        switch value {
        case .bool(let bool): bool
        case .int(let int): int
        case .double(let double): double
        case .string(let string): string
        case .data(let data): data
        case .date(let date): date
        case .array(let items): items.map(object(for:))
        case .dictionary(let items): items.mapValues(object(for:))
        }
    }

    /// The entries of a suite's top-level dictionary that are valid keys with values
    /// `DefaultsValue` can hold, under canonical keys. The others are left out (and left as they
    /// are in the suite).
    static func values(fromDomain domain: [String: Any]) -> [String: DefaultsValue] {
        var values: [String: DefaultsValue] = [:]
        values.reserveCapacity(domain.count)
        for (key, object) in domain {
            guard let key = try? DefaultsValidation.canonicalKey(key, backend: UserDefaultsProvider.backend),
                let value = value(from: object)
            else { continue }
            values[key] = value
        }
        return values
    }

    /// The value a property-list object holds, or `nil` for an object `DefaultsValue` cannot
    /// represent (an integer above `Int64.max`, a non-property-list object, nesting deeper than
    /// ``DefaultsValue/maximumNestingDepth``).
    static func value(from object: Any) -> DefaultsValue? {
        value(from: object, depth: 0)
    }

    private static func value(from object: Any, depth: Int) -> DefaultsValue? {
        switch object {
        case let string as String:
            return .string(string)
        case let data as Data:
            return .data(data)
        case let date as Date:
            return .date(date)
        case let number as NSNumber:
            // Swift's Bool, Int and Double arrive here too, bridged to NSNumber.
            return value(from: number)
        case let array as [Any]:
            guard depth < DefaultsValue.maximumNestingDepth else { return nil }
            var items: [DefaultsValue] = []
            items.reserveCapacity(array.count)
            for element in array {
                guard let item = value(from: element, depth: depth + 1) else { return nil }
                items.append(item)
            }
            return .array(items)
        case let dictionary as [String: Any]:
            guard depth < DefaultsValue.maximumNestingDepth else { return nil }
            var items: [String: DefaultsValue] = [:]
            items.reserveCapacity(dictionary.count)
            for (key, element) in dictionary {
                guard let item = value(from: element, depth: depth + 1) else { return nil }
                // Assignment, not `uniqueKeysWithValues`: canonically equivalent keys are equal
                // Strings, and a file may hold both spellings.
                items[key] = item
            }
            return .dictionary(items)
        default:
            return nil
        }
    }

    /// Tells booleans, integers and doubles apart by what the number is, never by what it converts
    /// to: `NSNumber(value: 1) as? Bool` and `NSNumber(value: 1.0) as? Int64` both succeed, so a
    /// cast would turn `.int(1)` into `.bool(true)`.
    static func value(from number: NSNumber) -> DefaultsValue? {
        if isBoolean(number) { return .bool(number.boolValue) }
        switch UInt8(bitPattern: number.objCType.pointee) {
        case UInt8(ascii: "d"), UInt8(ascii: "f"):
            // A Float widens to Double exactly.
            return .double(number.doubleValue)
        case UInt8(ascii: "Q"):
            let unsigned = number.uint64Value
            return unsigned <= UInt64(Int64.max) ? .int(Int64(unsigned)) : nil
        default:
            return .int(number.int64Value)
        }
    }

    /// Whether `number` is a `CFBoolean` rather than a `CFNumber`.
    static func isBoolean(_ number: NSNumber) -> Bool {
        #if canImport(Darwin)
        return CFGetTypeID(number) == CFBooleanGetTypeID()
        #else
        // swift-corelibs-foundation keeps exactly two boolean NSNumbers, the CFBoolean singletons
        // that `NSNumber(value:)` returns for `true` and `false` (its objCType "c" is not enough
        // on Apple platforms, where an Int8 number reports "c" too).
        return number === NSNumber(value: true) || number === NSNumber(value: false)
        #endif
    }
}
