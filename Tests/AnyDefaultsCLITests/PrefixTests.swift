import AnyDefaults
import Foundation
import Testing
import TestSupport

/// `keys --prefix` and `delete --prefix` through the executable: a prefix query of the store's
/// index, with the library's meaning of "under a prefix" (canonical forms, no wildcards).
@Suite(.ownThreads) struct PrefixTests {
    @Test(arguments: ["json", "sqlite", "lmdb"])
    func prefixesAreLiteralAndCanonical(kind: String) throws {
        try withTemporaryDirectory { directory in
            let cli = try CLI(directory)
            let store = kind == "json" ? cli.json() : "\(kind):" + cli.path("store.\(kind)")
            try cli.fill(store, with: ["a_b": .int(1), "axb": .int(2), "a%c": .int(3), "caf\u{E9}/x": .int(4), "cafe/y": .int(5), "b": .int(6), "x\u{301}k": .int(7), "xk": .int(8)])
            #expect(try cli.succeed(["--store", store, "keys", "--prefix", "a_"]).standardOutput == "a_b\n")
            #expect(try cli.succeed(["--store", store, "keys", "--prefix", "a%"]).standardOutput == "a%c\n")
            #expect(try cli.succeed(["--store", store, "keys", "--prefix", "cafe\u{301}"]).standardOutput == "caf\u{E9}/x\n")
            try cli.succeed(["--store", store, "delete", "--prefix", "a_"])
            #expect(try cli.contents(of: store).keys.sorted() == ["a%c", "axb", "b", "cafe/y", "caf\u{E9}/x", "xk", "x\u{301}k"])
            // A prefix is bytes of the canonical form, not whole characters: "x" is a prefix of
            // "x\u{301}k" (no composed form), for listing and deleting alike.
            #expect(try cli.succeed(["--store", store, "keys", "--prefix", "x"]).standardOutput == "xk\nx\u{301}k\n")
            try cli.succeed(["--store", store, "delete", "--prefix", "x"])
            #expect(try cli.contents(of: store).keys.sorted() == ["a%c", "axb", "b", "cafe/y", "caf\u{E9}/x"])
        }
    }
}
