import Foundation

extension DefaultsValue {
    /// Whether this value sorts before `other` in a fixed total order of stored values: by case
    /// (bool, int, double, string, data, date, array, dictionary), then by content. Consistent
    /// with `==`: equal values never precede each other (doubles and dates by their bits, strings
    /// and dictionary keys by their Unicode scalars, dictionaries by their keys in order, then their values).
    ///
    /// Used to store an unordered collection (a `Set`) in one order, whatever its iteration order,
    /// so that equal sets store equal values and a cache skips rewriting them.
    package func storagePrecedes(_ other: DefaultsValue) -> Bool {
        storageOrder(other) < 0
    }

    /// Negative, zero or positive as `self` sorts before, with, or after `other`.
    private func storageOrder(_ other: DefaultsValue) -> Int {
        switch (self, other) {
        case let (.bool(a), .bool(b)): return Self.order(a ? 1 : 0, b ? 1 : 0)
        case let (.int(a), .int(b)): return Self.order(a, b)
        case let (.double(a), .double(b)): return Self.order(Self.canonicalBits(a), Self.canonicalBits(b))
        case let (.string(a), .string(b)): return Self.scalarOrder(a, b)
        case let (.data(a), .data(b)): return a == b ? 0 : (a.lexicographicallyPrecedes(b) ? -1 : 1)
        case let (.date(a), .date(b)):
            return Self.order(Self.canonicalBits(a.timeIntervalSinceReferenceDate), Self.canonicalBits(b.timeIntervalSinceReferenceDate))
        case let (.array(a), .array(b)):
            for (left, right) in zip(a, b) {
                let order = left.storageOrder(right)
                if order != 0 { return order }
            }
            return Self.order(a.count, b.count)
        case let (.dictionary(a), .dictionary(b)):
            let (leftKeys, rightKeys) = (a.keys.sorted { Self.scalarOrder($0, $1) < 0 }, b.keys.sorted { Self.scalarOrder($0, $1) < 0 })
            for (left, right) in zip(leftKeys, rightKeys) {
                let order = Self.scalarOrder(left, right)
                if order != 0 { return order }
            }
            if leftKeys.count != rightKeys.count { return Self.order(leftKeys.count, rightKeys.count) }
            for (leftKey, rightKey) in zip(leftKeys, rightKeys) {
                guard let left = a[leftKey], let right = b[rightKey] else { continue }
                let order = left.storageOrder(right)
                if order != 0 { return order }
            }
            return 0
        default:
            return Self.order(caseRank, other.caseRank)
        }
    }

    private var caseRank: Int {
        switch self {
        case .bool: 0
        case .int: 1
        case .double: 2
        case .string: 3
        case .data: 4
        case .date: 5
        case .array: 6
        case .dictionary: 7
        }
    }

    /// Strings by their Unicode scalars, as `==` compares them: a store keeps the spelling written.
    private static func scalarOrder(_ a: String, _ b: String) -> Int {
        if sameScalars(a, b) { return 0 }
        return a.unicodeScalars.lexicographicallyPrecedes(b.unicodeScalars) { $0.value < $1.value } ? -1 : 1
    }

    private static func order<T: Comparable>(_ a: T, _ b: T) -> Int {
        a == b ? 0 : (a < b ? -1 : 1)
    }
}
