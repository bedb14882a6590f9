import AnyDefaultsCore
import Foundation
import Testing
import TestSupport

@Suite struct UTF8OrderTests {
    @Test(arguments: [
        ("", "", false), ("", "a", true), ("a", "", false), ("a", "a", false),
        ("a", "ab", true), ("ab", "a", false), ("B", "a", true), ("z", "é", true),
        ("é", "z", false), ("\u{0065}\u{0301}", "é", true), ("a\u{0}b", "a\u{0}c", true),
        ("settings.key10", "settings.key9", true), ("🙂", "\u{FFFF}", false),
    ])
    func ordersByUTF8Bytes(lhs: String, rhs: String, expected: Bool) {
        #expect(lhs.utf8Precedes(rhs) == expected)
    }

    @Test func agreesWithTheByteByByteOrder() {
        var random = SeededGenerator(seed: 7)
        let alphabet: [Character] = ["a", "b", "Z", ".", "é", "ß", "🙂", "\u{0301}", "\u{0}"]
        func word() -> String {
            String((0..<Int.random(in: 0...6, using: &random)).map { _ in alphabet.randomElement(using: &random) ?? "a" })
        }
        for _ in 0..<2000 {
            let (lhs, rhs) = (word(), word())
            #expect(lhs.utf8Precedes(rhs) == lhs.utf8.lexicographicallyPrecedes(rhs.utf8), "\(lhs.debugDescription) \(rhs.debugDescription)")
        }
    }

    @Test func bridgedStringsTakeTheSameOrder() {
        // Foundation strings may not be contiguous UTF-8 on Apple platforms: the fallback path.
        let lhs = NSString(string: "settings.alpha") as String
        let rhs = NSString(string: "settings.beta") as String
        #expect(lhs.utf8Precedes(rhs))
        #expect(!rhs.utf8Precedes(lhs))
    }
}
