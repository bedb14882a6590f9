import AnyDefaults
import Foundation
import Synchronization
import Testing

/// A scoped view validates keys as the store does, for the part the caller wrote (issue 27.4):
/// it never reads or writes its prefix itself, and no key written through it leaves the scope.
@Suite struct ScopedValidationTests {
    @Test func theEmptyKeyIsInvalidInAScopedViewAsInTheStore() throws {
        let errors = Mutex<[DefaultsError]>([])
        let defaults = Defaults(MemoryProvider(), errorHandler: { error in errors.withLock { $0.append(error) } })
        let tenant = defaults.scoped("tenant/acme/")
        // Through the throwing API: the store's own error for the empty key.
        func expectInvalidKey(_ body: () throws(DefaultsError) -> Void) {
            do {
                try body()
                Issue.record("no error")
            } catch {
                #expect(error.code == .invalidKey)
            }
        }
        let emptyKey = DefaultsKey<Int>("", default: 0)
        expectInvalidKey { () throws(DefaultsError) in try tenant.throwing.set(1, forKey: "") }
        expectInvalidKey { () throws(DefaultsError) in _ = try tenant.throwing.value(forKey: "") }
        expectInvalidKey { () throws(DefaultsError) in try tenant.throwing.removeValue(forKey: "") }
        expectInvalidKey { () throws(DefaultsError) in _ = try tenant.throwing.hasValue(forKey: "") }
        expectInvalidKey { () throws(DefaultsError) in _ = try tenant.throwing.removeValueIfPresent(forKey: "") }
        expectInvalidKey { () throws(DefaultsError) in try tenant.throwing.set(1, for: emptyKey) }
        expectInvalidKey { () throws(DefaultsError) in _ = try tenant.throwing.value(for: emptyKey) }
        expectInvalidKey { () throws(DefaultsError) in try tenant.write { tx in tx.set(1, forKey: "") } }
        // Through the non-throwing API: reported, and nothing stored, not even the prefix.
        tenant.set(1, forKey: "")
        tenant[DefaultsKey<Int>("", default: 0)] = 2
        #expect(tenant.integer(forKey: "") == 0)
        #expect(tenant[DefaultsKey<Int>("", default: 7)] == 7)
        #expect(defaults.keys().isEmpty)
        #expect(errors.withLock { $0 }.allSatisfy { $0.code == .invalidKey })
        #expect(errors.withLock { $0.count } >= 4)
        // Unscoped, the same calls fail the same way.
        #expect(throws: DefaultsError.self) { try defaults.throwing.set(1, forKey: "") }
    }

    @Test func aKeyThatWouldJoinThePrefixIsRefusedAndOthersAreListedAsWritten() throws {
        let defaults = Defaults(MemoryProvider())
        let cafe = defaults.scoped("cafe")
        // "\u{301}x" would make "cafe" + "\u{301}" into "café": a key outside the scope.
        let error = #expect(throws: DefaultsError.self) { try cafe.throwing.set(1, forKey: "\u{301}x") }
        #expect(error?.code == .invalidKey && error?.key == "\u{301}x")
        #expect(defaults.keys().isEmpty)
        // A combining mark after "/" stays itself: stored, listed and read as written.
        let tenant = defaults.scoped("tenant/")
        try tenant.throwing.set(2, forKey: "\u{301}x")
        #expect(tenant.keys() == ["\u{301}x"])
        #expect(tenant.integer(forKey: "\u{301}x") == 2)
        // NFD keys and prefixes: one entry, listed in canonical form.
        let decomposed = defaults.scoped("cafe\u{301}/")
        try decomposed.throwing.set(3, forKey: "nai\u{308}ve")
        #expect(defaults.scoped("caf\u{E9}/").keys() == ["na\u{EF}ve"])
        #expect(defaults.integer(forKey: "caf\u{E9}/na\u{EF}ve") == 3)
        // Every key written through a scope is listed by it, for generated keys too.
        var random = SystemRandomNumberGenerator()
        let pieces = ["a", "/", "\u{301}", "\u{308}", "e", "\u{1100}", "\u{1161}", "\u{11A8}", "日", " "]
        for prefix in ["p/", "e", "\u{1100}", "x\u{301}"] {
            let scope = defaults.scoped(prefix)
            for _ in 0..<50 {
                let key = (0..<Int.random(in: 1...4, using: &random)).map { _ in pieces.randomElement(using: &random)! }.joined()
                do {
                    try scope.throwing.set(1, forKey: key)
                    let listed = scope.keys()
                    #expect(listed.contains { $0 == key }, "prefix \(prefix.debugDescription), key \(key.debugDescription)")
                } catch {
                    #expect(error.code == .invalidKey)
                }
            }
            scope.removeAll()
            #expect(scope.keys().isEmpty)
        }
    }
}
