@testable import AnyDefaultsCore
import Testing
import TestSupport

/// The in-memory ordered index against a sorted array, under generated insertions and removals.
@Suite struct SortedKeySetTests {
    @Test func agreesWithASortedModelThroughSplitsAndEmptiedChunks() {
        let seed = UInt64.random(in: 0...UInt64.max)
        print("SortedKeySetTests seed \(seed)")
        var random = SeededGenerator(seed: seed)
        var set = SortedKeySet()
        var model: Set<String> = []
        for step in 0..<6000 {
            let key = "k\(Int.random(in: 0..<1500, using: &random))/\(Int.random(in: 0..<3, using: &random))"
            if Int.random(in: 0..<3, using: &random) == 0 {
                set.remove(key)
                model.remove(key)
            } else {
                set.insert(key)
                model.insert(key)
            }
            if step % 500 == 0 || step == 5999 {
                #expect(set.count == model.count)
                for prefix in ["", "k1", "k12", "k149", "k9/", "z"] {
                    let expected = DefaultsKeyPrefix.sorted(model.filter { $0.hasPrefix(prefix) })
                    #expect(set.keys(withPrefix: DefaultsKeyPrefix(prefix)) == expected, "step \(step), prefix \(prefix)")
                }
            }
        }
        for key in model { set.remove(key) }
        #expect(set.count == 0 && set.keys(withPrefix: DefaultsKeyPrefix("")).isEmpty)
    }

    @Test func theUpperBoundIsTheNextStringAfterEveryKeyUnderThePrefix() {
        #expect(DefaultsKeyPrefix("ab").upperBound == "ac")
        #expect(DefaultsKeyPrefix("a\u{D7FF}").upperBound == "a\u{E000}")
        #expect(DefaultsKeyPrefix("a\u{10FFFF}").upperBound == "b")
        #expect(DefaultsKeyPrefix("\u{10FFFF}\u{10FFFF}").upperBound == nil)
        #expect(DefaultsKeyPrefix("").upperBound == nil)
        #expect(DefaultsKeyPrefix("cafe\u{301}").canonical == "caf\u{E9}")
        #expect(DefaultsKeyPrefix("x").remainder(of: "x\u{301}y") == "\u{301}y")
        #expect(DefaultsKeyPrefix("e").remainder(of: "e\u{301}") == nil)
    }
}
