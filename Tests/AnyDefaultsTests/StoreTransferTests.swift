import AnyDefaults
import Foundation
import TestSupport
import Testing

/// Copying and moving a whole store in code (`copyAll(to:)`, `moveAll(to:)`), which
/// `anydefaults migrate` calls: across backends, with the same-store and persistence checks and
/// the compare-and-remove of a move.
@Suite struct StoreTransferTests {
    static let values: [String: DefaultsValue] = [
        "int": .int(.min), "double": .double(-0.0), "one": .double(1), "bool": .bool(true), "date": .date(Date(timeIntervalSinceReferenceDate: 0.125)),
        "data": .data(Data([0, 255])), "nested": .dictionary(["list": .array([.string("é"), .int(1)])]), "e\u{301}": .string("key in NFD"),
    ]

    /// Every pair of built-in backends (plain and cached): the destination gets every value
    /// exactly and keeps its own keys; a copy leaves the source as it was, a move empties it.
    @Test(arguments: EveryBackend.variants)
    func copyAndMoveToEveryOtherBackend(_ source: String) throws {
        for destination in EveryBackend.variants where destination != source {
            try EveryBackend.with(source) { openSource in
                try EveryBackend.with(destination) { openDestination in
                    let from = try openSource()
                    let to = try openDestination()
                    try from.apply(Self.values.map { .set($0.key, $0.value) })
                    try to.setValue(.string("mine"), forKey: "already.there")
                    var stages: [DefaultsStoreTransfer.Stage] = []
                    let copied = try from.copyAll(to: to) { stages.append($0) }
                    #expect(stages == [.reading, .writing(Self.values.count)])
                    #expect(Set(copied.copied) == Set(try from.keys()), "\(source) → \(destination)")
                    #expect(copied.removed.isEmpty && copied.keptInSource.isEmpty)
                    var expected = try from.allValues()
                    #expect(expected.count == Self.values.count)
                    expected["already.there"] = .string("mine")
                    #expect(try to.allValues() == expected, "\(source) → \(destination)")
                    guard destination.hasPrefix("memory:") == false else { return }
                    let moved = try from.moveAll(to: to)
                    #expect(moved.keptInSource.isEmpty)
                    #expect(Set(moved.removed) == Set(moved.copied))
                    #expect(try from.allValues() == [:], "\(source) → \(destination)")
                    #expect(try to.allValues() == expected)
                }
            }
        }
    }

    /// A key changed in the source between the copy and the removal keeps its new value there,
    /// and is reported; the others are moved.
    @Test(arguments: EveryBackend.shared)
    func aKeyChangedDuringAMoveStaysInTheSource(_ source: String) throws {
        try EveryBackend.with(source) { openSource in
            try withTemporaryDirectory { directory in
                let from = try openSource()
                let to = try SQLiteProvider(path: directory.path("to.sqlite"))
                try from.apply([.set("a", .int(1)), .set("b", .int(2)), .set("c", .int(3))])
                // Another writer (a second instance, as another process would be) changes "b"
                // after the copy, before the removal.
                let other = try openSource()
                let moved = try from.moveAll(to: to) { stage in
                    if case .removing = stage { try? other.setValue(.int(20), forKey: "b") }
                }
                #expect(moved.keptInSource == ["b"], "\(source)")
                #expect(moved.removed == ["a", "c"])
                #expect(try from.allValues() == ["b": .int(20)], "\(source)")
                #expect(try to.allValues() == ["a": .int(1), "b": .int(2), "c": .int(3)])
            }
        }
    }

    /// The same store (the same instance, a second instance, the same file by another path or a
    /// link) is refused before anything is written, and so is a move into a store that does not
    /// persist; the source is untouched.
    @Test func theSameStoreAndAMoveIntoMemoryAreRefused() throws {
        try withTemporaryDirectory { directory in
            let json = try JSONFileProvider(path: directory.path("s.json"))
            try json.setValue(.int(1), forKey: "k")
            try FileManager.default.createSymbolicLink(atPath: directory.path("link.json"), withDestinationPath: directory.path("s.json"))
            let sqlite = try SQLiteProvider(path: directory.path("s.sqlite"))
            try sqlite.setValue(.int(1), forKey: "k")
            let sameStores: [(any DefaultsProvider, any DefaultsProvider)] = [
                (json, json), (json, try JSONFileProvider(path: directory.path("link.json"))),
                (json, try JSONFileProvider(path: directory.path("sub/../s.json"))),
                (sqlite, try SQLiteProvider(path: directory.path("./s.sqlite"))), (json, CachingProvider(json)),
            ]
            for (one, other) in sameStores {
                for move in [false, true] {
                    do {
                        _ = try move ? one.moveAll(to: other) : one.copyAll(to: other)
                        Issue.record("\(type(of: one)) onto itself: no error")
                    } catch let error as DefaultsError {
                        #expect(error.code == .invalidConfiguration)
                        #expect(error.message.contains("same store"), "\(error)")
                    } catch {
                        Issue.record(error)
                    }
                    #expect(try one.allValues() == ["k": .int(1)])
                }
            }
            let memory = MemoryProvider()
            do {
                _ = try json.moveAll(to: memory)
                Issue.record("moved into memory")
            } catch let error as DefaultsError {
                #expect(error.code == .unsupported)
                #expect(error.message.contains("does not persist"), "\(error)")
            } catch {
                Issue.record(error)
            }
            #expect(try json.allValues() == ["k": .int(1)])
            #expect(try memory.allValues() == [:])
            // A copy into memory is fine.
            try json.copyAll(to: memory)
            #expect(try memory.allValues() == ["k": .int(1)])
        }
    }

    /// Through `Defaults`, scopes included: seeded random keys under look-alike prefixes; copying
    /// or moving one scope to a scope of another store (or of the same store, when neither scope
    /// contains the other) gives exactly what a model of both stores says, typed reads through
    /// both facades' caches see it at once, and scopes of which one contains the other are refused.
    @Test(arguments: EveryBackend.shared)
    func scopesOfDefaultsAgainstAModel(_ template: String) throws {
        try EveryBackend.with(template) { open in
            try withTemporaryDirectory { directory in
                var random = SeededGenerator(seed: 2211)
                let prefixes = ["t/a/", "t/ab/", "t/b/", "t/a", "u/"]
                let source = Defaults(try open())
                let destination = Defaults(try SQLiteProvider(path: directory.path("to.sqlite")))
                var model: [String: DefaultsValue] = [:]
                var destinationModel: [String: DefaultsValue] = ["t/b/mine": .string("kept")]
                try destination.throwing.set("kept", forKey: "t/b/mine")
                for index in 0..<40 {
                    let key = prefixes.randomElement(using: &random)! + "k\(Int.random(in: 0..<8, using: &random))"
                    model[key] = .int(Int64(index))
                }
                try source.provider.apply(model.map { .set($0.key, $0.value) })
                // A typed read through each cache first, so that a stale cached value would show.
                let typed = (0..<8).map { DefaultsKey<Int>("k\($0)", default: -1) }
                for key in typed {
                    _ = source.scoped("t/a/")[key]
                    _ = destination.scoped("t/b/")[key]
                }
                func typedValue(_ value: DefaultsValue?) -> Int {
                    if case .int(let number) = value { Int(number) } else { -1 }
                }

                func under(_ prefix: String, _ values: [String: DefaultsValue]) -> [String: DefaultsValue] {
                    values.filter { $0.key.hasPrefix(prefix) }
                }
                // Copy "t/a/" of the source to "t/b/" of the destination.
                let copied = try source.scoped("t/a/").throwing.copyAll(to: destination.scoped("t/b/"))
                let moving = under("t/a/", model)
                #expect(Set(copied.copied) == Set(moving.keys.map { String($0.dropFirst(4)) }), "\(template)")
                for (key, value) in moving { destinationModel["t/b/" + key.dropFirst(4)] = value }
                #expect(try destination.provider.allValues() == destinationModel, "\(template)")
                for index in 0..<8 {
                    #expect(try destination.scoped("t/b/").throwing.value(forKey: "k\(index)") == destinationModel["t/b/k\(index)"], "\(template)")
                    #expect(destination.scoped("t/b/")[typed[index]] == typedValue(destinationModel["t/b/k\(index)"]), "\(template)")
                }
                #expect(try source.provider.allValues() == model, "a copy leaves the source: \(template)")

                // Move "t/a/" to "u/" within the source: the scopes do not contain each other.
                let moved = try source.scoped("t/a/").throwing.moveAll(to: source.scoped("u/"))
                #expect(moved.keptInSource.isEmpty && Set(moved.removed) == Set(moved.copied))
                for (key, value) in moving {
                    model[key] = nil
                    model["u/" + key.dropFirst(4)] = value
                }
                #expect(try source.provider.allValues() == model, "\(template)")
                for index in 0..<8 {
                    #expect(try source.scoped("t/a/").throwing.value(forKey: "k\(index)") == nil, "\(template)")
                    #expect(source.scoped("t/a/")[typed[index]] == -1, "\(template)")
                    #expect(try source.scoped("u/").throwing.value(forKey: "k\(index)") == model["u/k\(index)"], "\(template)")
                }

                // Scopes of one store of which one contains the other, and a whole store onto
                // itself, are refused before anything changes.
                for (from, to) in [("t/", "t/a/"), ("t/a/", "t/"), ("u/", "u/"), ("", "")] {
                    #expect(throws: DefaultsError.self, "\(from) → \(to)") {
                        try source.scoped(from).throwing.copyAll(to: source.scoped(to))
                    }
                    #expect(throws: DefaultsError.self) { try source.scoped(from).throwing.moveAll(to: source.scoped(to)) }
                }
                #expect(try source.provider.allValues() == model, "\(template)")

                // The whole store, through the non-throwing forwarders.
                source.moveAll(to: destination.scoped("all/"))
                #expect(try source.provider.allValues() == [:], "\(template)")
                for (key, value) in model { destinationModel["all/" + key] = value }
                #expect(try destination.provider.allValues() == destinationModel, "\(template)")
            }
        }
    }

    /// A scope is its prefix's canonical form, as everywhere else in the library: a scope spelled
    /// in NFD copies the NFC keys with their names whole (not cut by the NFD spelling's byte
    /// length), the key equal to the prefix itself (no name in the scope) is neither copied nor
    /// removed, and scopes of one store that contain each other under another spelling are refused.
    @Test(arguments: ["cafe\u{301}/", "caf\u{E9}/"])
    func aScopeIsItsCanonicalPrefixWithoutThePrefixItself(_ spelling: String) throws {
        let store = Defaults(MemoryProvider())
        let seeded: [String: DefaultsValue] = ["caf\u{E9}/": .int(0), "caf\u{E9}/x": .int(1), "caf\u{E9}/\u{E9}t\u{E9}": .int(2), "cafe/y": .int(3)]
        try store.provider.apply(seeded.map { .set($0.key, $0.value) })
        let destination = Defaults(MemoryProvider())
        let copied = try store.scoped(spelling).throwing.copyAll(to: destination.scoped("n/"))
        #expect(copied.copied == ["x", "\u{E9}t\u{E9}"])
        #expect(try destination.provider.allValues() == ["n/x": .int(1), "n/\u{E9}t\u{E9}": .int(2)])

        for other in ["caf\u{E9}/", "cafe\u{301}/", "cafe\u{301}/x/", "caf\u{E9}"] {
            #expect(throws: DefaultsError.self, "\(spelling) → \(other)") {
                try store.scoped(spelling).throwing.moveAll(to: store.scoped(other))
            }
        }
        #expect(try store.provider.allValues() == seeded)

        let json = try withTemporaryDirectory { directory in
            let target = Defaults(try JSONFileProvider(path: directory.path("to.json")))
            let moved = try store.scoped(spelling).throwing.moveAll(to: target.scoped("m/"))
            #expect(moved.removed == ["x", "\u{E9}t\u{E9}"] && moved.keptInSource.isEmpty)
            return try target.provider.allValues()
        }
        #expect(json == ["m/x": .int(1), "m/\u{E9}t\u{E9}": .int(2)])
        #expect(try store.provider.allValues() == ["caf\u{E9}/": .int(0), "cafe/y": .int(3)], "the prefix's own key stays")
    }
}
