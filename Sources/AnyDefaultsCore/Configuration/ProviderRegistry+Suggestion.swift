extension ProviderRegistry {
    /// The registered scheme that `scheme` most likely misspells, for "did you mean sqlite:?": the
    /// nearest by edit distance when at most two letters differ (one for a scheme of up to four
    /// letters), else the one it begins (`mem` → `memory`) or that begins it (`sqlite3` → `sqlite`).
    static func suggestion(for scheme: String, among schemes: [String]) -> String? {
        let typed = Array(scheme.lowercased())
        guard typed.count >= 2 else { return nil }
        let nearest = schemes.map { (scheme: $0, distance: editDistance(typed, Array($0))) }
            .min { ($0.distance, $0.scheme) < ($1.distance, $1.scheme) }
        if let nearest, nearest.distance <= (typed.count <= 4 ? 1 : 2) { return nearest.scheme }
        let lowered = String(typed)
        return schemes.sorted().first { lowered.count >= 3 && ($0.hasPrefix(lowered) || lowered.hasPrefix($0)) }
    }

    /// The Levenshtein distance (insertions, deletions, substitutions, and a swap of two
    /// neighbours counted as one).
    private static func editDistance(_ a: [Character], _ b: [Character]) -> Int {
        if a.isEmpty || b.isEmpty { return max(a.count, b.count) }
        var before = [Int](repeating: 0, count: b.count + 1)
        var previous = Array(0...b.count)
        var current = [Int](repeating: 0, count: b.count + 1)
        for i in 1...a.count {
            current[0] = i
            for j in 1...b.count {
                let cost = a[i - 1] == b[j - 1] ? 0 : 1
                current[j] = min(previous[j] + 1, current[j - 1] + 1, previous[j - 1] + cost)
                if i > 1, j > 1, a[i - 1] == b[j - 2], a[i - 2] == b[j - 1] {
                    current[j] = min(current[j], before[j - 2] + 1)
                }
            }
            (before, previous, current) = (previous, current, before)
        }
        return previous[b.count]
    }
}
