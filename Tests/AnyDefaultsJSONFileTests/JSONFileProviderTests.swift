@testable import AnyDefaultsJSONFile
import AnyDefaultsCore
import Foundation
import Synchronization
import TestSupport
import Testing

@Suite struct JSONFileProviderTests {
    @Test func persistsEveryKindOfValueAcrossReopening() throws {
        try withTemporaryDirectory { directory in
            let path = directory.path("settings.json")
            let values: [String: DefaultsValue] = [
                "int": .int(.min), "double": .double(-0.0), "nan": .double(.nan), "bool": .bool(false),
                "string": .string("é\n\"x\""), "data": .data(Data([0, 255])), "date": .date(Date(timeIntervalSinceReferenceDate: 1.5)),
                "array": .array([.int(1), .array([])]), "dictionary": .dictionary(["$only": .int(1)]),
            ]
            do {
                let store = try JSONFileProvider(path: path)
                #expect(try store.keys().isEmpty)
                #expect(!FileManager.default.fileExists(atPath: path), "opening alone creates no file")
                try store.apply(values.map { .set($0.key, $0.value) })
            }
            let reopened = try JSONFileProvider(path: path)
            #expect(try reopened.allValues() == values)
            #expect(try Set(reopened.keys()) == Set(values.keys))
        }
    }

    @Test func instancesOnOneFileShareStateAndReportExternalEvents() throws {
        try withTemporaryDirectory { directory in
            let first = try JSONFileProvider(path: directory.path("s.json"))
            // Another spelling of the same file.
            let second = try JSONFileProvider(path: directory.path("./sub/../s.json").replacingOccurrences(of: "/sub/..", with: "/."))
            let firstEvents = EventLog(first)
            let secondEvents = EventLog(second)
            try first.setValue(.int(1), forKey: "a")
            #expect(try second.value(forKey: "a") == .int(1))
            try second.removeValue(forKey: "a")
            #expect(try first.value(forKey: "a") == nil)
            #expect(firstEvents.all == [
                DefaultsChangeEvent(key: "a", newValue: .int(1), origin: .local),
                DefaultsChangeEvent(key: "a", newValue: nil, origin: .external),
            ])
            #expect(secondEvents.all == [
                DefaultsChangeEvent(key: "a", newValue: .int(1), origin: .external),
                DefaultsChangeEvent(key: "a", newValue: nil, origin: .local),
            ])
        }
    }

    @Test func writingTheStoredValueWritesNothingAndReportsNothing() throws {
        try withTemporaryDirectory { directory in
            let path = directory.path("s.json")
            let store = try JSONFileProvider(path: path)
            try store.apply([.set("a", .double(.nan)), .set("b", .dictionary(["x": .int(1)]))])
            let before = try FileFacts.identity(path)
            let generation = FileFacts.generation(path)
            let events = EventLog(store)
            try store.setValue(.double(.nan), forKey: "a")
            try store.apply([.set("b", .dictionary(["x": .int(1)])), .remove("absent")])
            try store.removeValue(forKey: "absent")
            try store.apply([])
            #expect(try FileFacts.identity(path) == before)
            #expect(FileFacts.generation(path) == generation)
            #expect(events.all.isEmpty)
            // A real change does write.
            try store.setValue(.int(2), forKey: "b")
            #expect(try FileFacts.identity(path) != before)
            #expect(events.all == [DefaultsChangeEvent(key: "b", newValue: .int(2))])
        }
    }

    @Test func aBatchIsOneWriteWithEventsInOrder() throws {
        try withTemporaryDirectory { directory in
            let path = directory.path("s.json")
            let store = try JSONFileProvider(path: path)
            try store.setValue(.int(0), forKey: "c")
            let events = EventLog(store)
            let generation = FileFacts.generation(path)
            try store.apply([.set("b", .int(1)), .set("a", .int(2)), .remove("c"), .set("b", .int(3)), .set("a", .int(2))])
            #expect(FileFacts.generation(path) == generation + 1)
            #expect(events.all.map(\.key) == ["b", "a", "c", "b"])
            #expect(try store.allValues() == ["a": .int(2), "b": .int(3)])
            #expect(try JSONFileDecoder.decode(Array(FileFacts.bytes(path))) == ["a": .int(2), "b": .int(3)])
        }
    }

    @Test func aRejectedBatchLeavesNoTrace() throws {
        try withTemporaryDirectory { directory in
            let path = directory.path("s.json")
            let store = try JSONFileProvider(path: path)
            try store.setValue(.int(1), forKey: "a")
            let before = try FileFacts.bytes(path)
            var deep = DefaultsValue.int(0)
            for _ in 0...DefaultsValue.maximumNestingDepth { deep = .array([deep]) }
            #expect(defaultsError { try store.apply([.set("a", .int(2)), .set("", .int(1))]) }?.code == .invalidKey)
            #expect(defaultsError { try store.apply([.set("a", .int(2)), .set("deep", deep)]) }?.code == .invalidValue)
            #expect(try store.value(forKey: "a") == .int(1))
            #expect(try FileFacts.bytes(path) == before)
        }
    }

    @Test func removeAllWritesAnEmptyObjectOnce() throws {
        try withTemporaryDirectory { directory in
            let path = directory.path("s.json")
            let store = try JSONFileProvider(path: path)
            try store.apply([.set("b", .int(1)), .set("a", .int(1))])
            let events = EventLog(store)
            try store.removeAll()
            #expect(try FileFacts.text(path) == "{}\n")
            #expect(events.all.map(\.key) == ["a", "b"])
            let generation = FileFacts.generation(path)
            try store.removeAll()
            #expect(FileFacts.generation(path) == generation)
        }
    }

    @Test func filesAreOwnerOnlyAndKeepPermissionsGivenLater() throws {
        try withTemporaryDirectory { directory in
            let path = directory.path("deeper/still/s.json")
            let store = try JSONFileProvider(path: path)
            try store.setValue(.int(1), forKey: "a")
            #expect(try FileFacts.permissions(path) == 0o600)
            #expect(try FileFacts.permissions(path + ".lock") == 0o600)
            #expect(try FileFacts.permissions(directory.path("deeper/still")) == 0o700)
            // Someone chose to share the file with the group: a write keeps that.
            chmod(path, 0o640)
            try store.setValue(.int(2), forKey: "a")
            #expect(try FileFacts.permissions(path) == 0o640)
            // An administrator writing a user's file leaves it the user's.
            if geteuid() == 0 {
                chown(path, 65534, 65534)
                try store.setValue(.int(3), forKey: "a")
                let attributes = try FileManager.default.attributesOfItem(atPath: path)
                #expect((attributes[.ownerAccountID] as? NSNumber)?.intValue == 65534)
                #expect((attributes[.groupOwnerAccountID] as? NSNumber)?.intValue == 65534)
            }
        }
    }

    @Test func aRecoveryHandlerMayOpenOtherStores() throws {
        try withTemporaryDirectory { directory in
            let path = directory.path("s.json")
            let other = directory.path("other.json")
            try FileFacts.write("{", to: path)
            let opened = Mutex(false)
            let options = JSONFileProvider.Options(corruptionPolicy: .moveAside, onRecovery: { _ in
                let store = try? JSONFileProvider(path: other)
                opened.withLock { $0 = store != nil }
            })
            _ = try JSONFileProvider(path: path, options: options)
            #expect(opened.withLock { $0 })
        }
    }

    @Test func noTemporaryFilesAreLeftBehind() throws {
        try withTemporaryDirectory { directory in
            let store = try JSONFileProvider(path: directory.path("s.json"))
            for index in 0..<20 { try store.setValue(.int(Int64(index)), forKey: "k\(index % 3)") }
            #expect(try FileFacts.names(in: directory.path) == ["s.json", "s.json.lock"])
        }
    }

    @Test func aSymbolicLinkStaysALink() throws {
        try withTemporaryDirectory { directory in
            let target = directory.path("real.json")
            let link = directory.path("link.json")
            try FileFacts.write("{\"a\": 1}\n", to: target)
            try FileManager.default.createSymbolicLink(atPath: link, withDestinationPath: target)
            let store = try JSONFileProvider(path: link)
            #expect(store.path == URL(fileURLWithPath: target).resolvingSymlinksInPath().path)
            try store.setValue(.int(2), forKey: "a")
            #expect(try FileManager.default.destinationOfSymbolicLink(atPath: link) == target)
            #expect(try FileFacts.text(target).contains("\"a\": 2"))
        }
    }

    @Test func readsAHandWrittenFileAndRewritesItCanonically() throws {
        try withTemporaryDirectory { directory in
            let path = directory.path("s.json")
            try FileFacts.write(#"{"b": [1, 2.0], "a": {"$date": "2024-05-01T14:00:00+02:00"}}"#, to: path)
            let store = try JSONFileProvider(path: path)
            #expect(try store.value(forKey: "b") == .array([.int(1), .double(2)]))
            try store.setValue(.bool(true), forKey: "c")
            #expect(try FileFacts.text(path) == """
                {
                  "a": {"$date": "2024-05-01T12:00:00Z"},
                  "b": [
                    1,
                    2.0
                  ],
                  "c": true
                }

                """)
        }
    }

    // MARK: Bad files

    @Test func aCorruptedFileIsReportedWithPositionAndLeftAlone() throws {
        try withTemporaryDirectory { directory in
            let path = directory.path("s.json")
            let damaged = "{\n  \"a\": 1,\n  \"b\": \n"
            try FileFacts.write(damaged, to: path)
            let error = try #require(defaultsError { _ = try JSONFileProvider(path: path) })
            #expect(error.code == .corrupted)
            #expect(error.backend == "JSONFile")
            #expect(error.path == URL(fileURLWithPath: path).resolvingSymlinksInPath().path)
            #expect(error.message.contains("line 4, column 1"))
            #expect(error.message.contains("corruptionPolicy .moveAside") && error.message.contains("recovery=moveaside"))
            #expect(error.kind == .storeState)
            let cause = try #require(error.cause as? JSONFileParseError)
            #expect((cause.line, cause.column) == (4, 1))
            #expect(try FileFacts.text(path) == damaged)
            #expect(try FileFacts.names(in: directory.path) == ["s.json"])
        }
    }

    @Test(arguments: ["", "[]", "\"x\"", "{\"a\": 1", "{\"a\": null}", "\u{FEFF}"])
    func badContentsAreCorrupted(_ contents: String) throws {
        try withTemporaryDirectory { directory in
            let path = directory.path("s.json")
            try FileFacts.write(contents, to: path)
            #expect(defaultsError { _ = try JSONFileProvider(path: path) }?.code == .corrupted)
            #expect(try FileFacts.text(path) == contents)
        }
    }

    @Test func aFileDamagedWhileOpenIsNeverOverwritten() throws {
        try withTemporaryDirectory { directory in
            let path = directory.path("s.json")
            let store = try JSONFileProvider(path: path)
            try store.setValue(.int(1), forKey: "a")
            try FileFacts.write("{\"a\": 2,", to: path)
            #expect(defaultsError { try store.setValue(.int(3), forKey: "b") }?.code == .corrupted)
            #expect(defaultsError { try store.removeAll() }?.code == .corrupted)
            #expect(defaultsError { try store.refresh() }?.code == .corrupted)
            #expect(try FileFacts.text(path) == "{\"a\": 2,")
            #expect(try store.value(forKey: "a") == .int(1), "memory keeps the last good contents")
            // Once repaired, writes go on from the repaired contents.
            try FileFacts.write("{\"a\": 2}", to: path)
            try store.setValue(.int(3), forKey: "b")
            #expect(try store.allValues() == ["a": .int(2), "b": .int(3)])
        }
    }

    @Test func recoveryMovesTheBadFileAsideAndStartsEmpty() throws {
        try withTemporaryDirectory { directory in
            let path = directory.path("s.json")
            let recoveries = Mutex<[JSONFileRecovery]>([])
            let options = JSONFileProvider.Options(corruptionPolicy: .moveAside, onRecovery: { recovery in
                recoveries.withLock { $0.append(recovery) }
            })
            try FileFacts.write("{\"a\": 1,,}", to: path)
            do {
                let store = try JSONFileProvider(path: path, options: options)
                #expect(try store.keys().isEmpty)
                try store.setValue(.int(2), forKey: "b")
                // Damaged again while open: the next write sets it aside too, under its own name.
                try FileFacts.write("[]", to: path)
                let events = EventLog(store)
                try store.setValue(.int(3), forKey: "c")
                #expect(try store.allValues() == ["c": .int(3)])
                #expect(events.all == [
                    DefaultsChangeEvent(key: "b", newValue: nil, origin: .external),
                    DefaultsChangeEvent(key: "c", newValue: .int(3), origin: .local),
                ])
            }
            let moved = recoveries.withLock { $0 }
            try #require(moved.count == 2)
            #expect(moved.allSatisfy { $0.error.code == .corrupted })
            #expect(try FileFacts.text(moved[0].movedTo) == "{\"a\": 1,,}")
            #expect(try FileFacts.text(moved[1].movedTo) == "[]")
            let name = URL(fileURLWithPath: moved[0].movedTo).lastPathComponent
            #expect(name.wholeMatch(of: /s\.json\.corrupted-\d{8}T\d{6}Z(-\d+)?/) != nil, "\(name)")
            #expect(try JSONFileProvider(path: path).allValues() == ["c": .int(3)])
        }
    }

    @Test func pathsThatCannotWorkAreRejected() throws {
        try withTemporaryDirectory { directory in
            #expect(defaultsError { _ = try JSONFileProvider(path: "") }?.code == .invalidConfiguration)
            #expect(defaultsError { _ = try JSONFileProvider(url: URL(string: "https://example.com/s.json")!) }?.code == .invalidConfiguration)
            #expect(defaultsError { _ = try JSONFileProvider(path: directory.path) }?.code == .invalidConfiguration)
            let options = JSONFileProvider.Options(createsDirectories: false)
            #expect(defaultsError { _ = try JSONFileProvider(path: directory.path("missing/s.json"), options: options) }?.code == .notFound)
        }
    }

    /// A write that fails (here the file became a directory) leaves memory and disk as they were.
    @Test func aFailedWriteChangesNothing() throws {
        try withTemporaryDirectory { directory in
            let path = directory.path("s.json")
            // Not watching: the watcher would (rightly) take the removal of the file as "now empty".
            let store = try JSONFileProvider(path: path, options: .init(watchesExternalChanges: false))
            try store.setValue(.int(1), forKey: "a")
            try FileManager.default.removeItem(atPath: path)
            try FileManager.default.createDirectory(atPath: path + "/blocker", withIntermediateDirectories: true)
            let events = EventLog(store)
            let error = try #require(defaultsError { try store.setValue(.int(2), forKey: "a") })
            #expect(error.path == store.path)
            #expect(error.key == "a")
            #expect(error.cause is SystemCallError)
            #expect(try store.value(forKey: "a") == .int(1))
            #expect(events.all.isEmpty)
            #expect(try FileFacts.names(in: directory.path) == ["s.json", "s.json.lock"])
        }
    }

    // MARK: Changes made elsewhere

    @Test func aWriteMergesChangesMadeUnderneath() throws {
        try withTemporaryDirectory { directory in
            let path = directory.path("s.json")
            // Not watching, so that only the write can notice the change.
            let store = try JSONFileProvider(path: path, options: .init(watchesExternalChanges: false))
            try store.setValue(.int(1), forKey: "mine")
            // Someone edits the file by hand (no lock, no generation bump).
            try FileFacts.write("{\"mine\": 1, \"theirs\": 2}", to: path)
            let events = EventLog(store)
            #expect(try store.value(forKey: "theirs") == nil, "reads are served from memory")
            try store.setValue(.int(3), forKey: "also-mine")
            #expect(try store.allValues() == ["mine": .int(1), "theirs": .int(2), "also-mine": .int(3)])
            #expect(try JSONFileDecoder.decode(Array(FileFacts.bytes(path))) == store.allValues())
            #expect(events.all == [
                DefaultsChangeEvent(key: "theirs", newValue: .int(2), origin: .external),
                DefaultsChangeEvent(key: "also-mine", newValue: .int(3), origin: .local),
            ])
        }
    }

    @Test func reloadAndRefreshPickUpOutsideChanges() throws {
        try withTemporaryDirectory { directory in
            let path = directory.path("s.json")
            let store = try JSONFileProvider(path: path, options: .init(watchesExternalChanges: false))
            let refreshing = try JSONFileProvider(
                path: directory.path("r.json"), options: .init(refreshInterval: .zero, watchesExternalChanges: false))
            try FileFacts.write("{\"a\": 1}", to: path)
            try FileFacts.write("{\"a\": 1}", to: refreshing.path)
            #expect(try refreshing.value(forKey: "a") == .int(1))
            #expect(try store.value(forKey: "a") == nil)
            let events = EventLog(store)
            try store.refresh()
            #expect(try store.value(forKey: "a") == .int(1))
            try store.refresh()
            #expect(events.all == [DefaultsChangeEvent(key: "a", newValue: .int(1), origin: .external)])
        }
    }

    @Test func outsideChangesArriveWithoutAnyCall() throws {
        try withTemporaryDirectory { directory in
            let path = directory.path("s.json")
            let store = try JSONFileProvider(path: path)
            #expect(store.capabilities.contains(.externalChanges))
            let events = EventLog(store)
            try FileFacts.write("{\"a\": 1}", to: path)
            _ = waitUntil { !events.all.isEmpty }
            #expect(events.all == [DefaultsChangeEvent(key: "a", newValue: .int(1), origin: .external)])
            #expect(try store.value(forKey: "a") == .int(1))
            // A damaged file is not taken in, and not reported until someone asks.
            try FileFacts.write("{\"a\": ", to: path)
            usleep(200_000)
            #expect(try store.value(forKey: "a") == .int(1))
            #expect(defaultsError { try store.refresh() }?.code == .corrupted)
        }
    }

    @Test func threadsWritingAtOnceLoseNothing() async throws {
        try await withTemporaryDirectory { directory in
            let path = directory.path("s.json")
            let first = try JSONFileProvider(path: path)
            let second = try JSONFileProvider(path: path)
            try await withThrowingTaskGroup(of: Void.self) { group in
                for worker in 0..<8 {
                    let store = worker.isMultiple(of: 2) ? first : second
                    group.addTask {
                        for index in 0..<15 {
                            try store.setValue(.int(Int64(index)), forKey: "w\(worker).\(index)")
                            _ = try store.value(forKey: "w\(worker).\(index)")
                        }
                    }
                }
                try await group.waitForAll()
            }
            #expect(try first.keys().count == 120)
            #expect(try JSONFileDecoder.decode(Array(FileFacts.bytes(path))).count == 120)
        }
    }
}
