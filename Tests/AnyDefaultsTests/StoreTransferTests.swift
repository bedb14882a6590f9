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
}
