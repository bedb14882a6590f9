import AnyDefaultsPlatform

package extension String {
    /// Whether this string's UTF-8 bytes sort before `other`'s: the order of keys in files and
    /// in the events of a multi-key change, the same on every platform.
    ///
    /// Equal to `utf8.lexicographicallyPrecedes(other.utf8)`, which goes byte by byte through
    /// the generic collection API and dominated sorting the keys of a file; this compares the
    /// contiguous bytes with `memcmp`.
    func utf8Precedes(_ other: String) -> Bool {
        let order = utf8.withContiguousStorageIfAvailable { left in
            other.utf8.withContiguousStorageIfAvailable { right in
                let common = Swift.min(left.count, right.count)
                if common > 0, let leftBytes = left.baseAddress, let rightBytes = right.baseAddress {
                    let order = memcmp(leftBytes, rightBytes, common)
                    if order != 0 { return order < 0 }
                }
                return left.count < right.count
            }
        }
        // Strings without contiguous UTF-8 (bridged from Objective-C) take the generic path.
        return (order ?? nil) ?? utf8.lexicographicallyPrecedes(other.utf8)
    }
}
