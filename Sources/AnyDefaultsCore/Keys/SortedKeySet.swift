/// A set of canonical keys kept in UTF-8 byte order, for a provider that keeps its values in a
/// dictionary and must answer prefix queries without scanning every key (the in-memory provider).
///
/// Keys live in sorted chunks of at most ``chunkCapacity``: an insertion or removal moves at most
/// one chunk's keys (and, when a chunk splits or empties, the list of chunks, a few hundred times
/// shorter than the set), and a prefix query finds its first key with two binary searches.
///
/// ```swift
/// var index = SortedKeySet(values.keys)
/// index.insert("tenant/acme/plan")
/// let keys = index.keys(withPrefix: DefaultsKeyPrefix("tenant/acme/"))
/// ```
package struct SortedKeySet: Sendable {
    /// The most keys one chunk holds; a fuller chunk splits in two.
    package static let chunkCapacity = 512

    private var chunks: [[String]] = []

    /// An empty set.
    package init() {}

    /// The set of `keys` (canonical, each once).
    package init(_ keys: some Sequence<String>) {
        let sorted = DefaultsKeyPrefix.sorted(Array(keys))
        let size = Self.chunkCapacity / 2
        chunks = stride(from: 0, to: sorted.count, by: size).map { Array(sorted[$0..<min($0 + size, sorted.count)]) }
    }

    /// How many keys the set holds.
    package var count: Int { chunks.reduce(0) { $0 + $1.count } }

    /// Adds `key`; adding a key already there changes nothing.
    package mutating func insert(_ key: String) {
        guard !chunks.isEmpty else {
            chunks = [[key]]
            return
        }
        // The first chunk whose last key is not below `key`, or else the last chunk.
        let chunk = min(firstChunk(notBelow: key), chunks.count - 1)
        let index = Self.firstIndex(in: chunks[chunk], notBelow: key)
        if index < chunks[chunk].count, chunks[chunk][index] == key { return }
        chunks[chunk].insert(key, at: index)
        if chunks[chunk].count > Self.chunkCapacity {
            let upper = Array(chunks[chunk][(Self.chunkCapacity / 2)...])
            chunks[chunk].removeSubrange((Self.chunkCapacity / 2)...)
            chunks.insert(upper, at: chunk + 1)
        }
    }

    /// Removes `key`; removing a key not there changes nothing.
    package mutating func remove(_ key: String) {
        let chunk = firstChunk(notBelow: key)
        guard chunk < chunks.count else { return }
        let index = Self.firstIndex(in: chunks[chunk], notBelow: key)
        guard index < chunks[chunk].count, chunks[chunk][index] == key else { return }
        chunks[chunk].remove(at: index)
        if chunks[chunk].isEmpty { chunks.remove(at: chunk) }
    }

    /// Removes every key.
    package mutating func removeAll() {
        chunks.removeAll()
    }

    /// The keys under `prefix`, in UTF-8 byte order.
    package func keys(withPrefix prefix: DefaultsKeyPrefix) -> [String] {
        var result: [String] = []
        var chunk = firstChunk(notBelow: prefix.canonical)
        guard chunk < chunks.count else { return result }
        var index = Self.firstIndex(in: chunks[chunk], notBelow: prefix.canonical)
        while chunk < chunks.count {
            let keys = chunks[chunk]
            while index < keys.count {
                guard prefix.containsCanonical(keys[index]) else { return result }
                result.append(keys[index])
                index += 1
            }
            chunk += 1
            index = 0
        }
        return result
    }

    /// The index of the first chunk whose last key is not below `key` (`chunks.count` if none).
    private func firstChunk(notBelow key: String) -> Int {
        // Chunks are never empty.
        Self.partitionPoint(chunks.count) { chunks[$0][chunks[$0].count - 1].utf8Precedes(key) }
    }

    /// The index of the first key of `keys` not below `key` (`keys.count` if none).
    private static func firstIndex(in keys: [String], notBelow key: String) -> Int {
        partitionPoint(keys.count) { keys[$0].utf8Precedes(key) }
    }

    /// The first index in `0..<count` where `isBelow` turns false (it is true, then false).
    private static func partitionPoint(_ count: Int, _ isBelow: (Int) -> Bool) -> Int {
        var low = 0
        var high = count
        while low < high {
            let middle = (low + high) / 2
            if isBelow(middle) { low = middle + 1 } else { high = middle }
        }
        return low
    }
}
