import AnyDefaultsCore
@testable import AnyDefaultsJSONFile
import Foundation
import TestSupport
import Testing

/// The JSON file backend under the core's rules for files: links written through, read-only
/// files refused, FIFOs never waited for, names too long refused on opening, and numbers no
/// double holds refused in every JSON input.
@Suite struct JSONFileFileRulesTests {
    @Test func aDanglingLinkGetsItsTargetCreatedAndStaysALink() throws {
        try withTemporaryDirectory { directory in
            try FileManager.default.createSymbolicLink(atPath: directory.path("link.json"), withDestinationPath: "target.json")
            let store = try JSONFileProvider(path: directory.path("link.json"))
            #expect(store.path == directory.path("target.json"))
            try store.setValue(.int(1), forKey: "k")
            #expect(try FileManager.default.destinationOfSymbolicLink(atPath: directory.path("link.json")) == "target.json")
            #expect(try JSONFileDecoder.decode(Array(FileFacts.bytes(directory.path("target.json")))) == ["k": .int(1)])
            #expect(try FileFacts.permissions(directory.path("target.json")) == 0o600)
        }
    }

    /// A link that another user plants at the store's path in a shared directory (`/tmp`) after
    /// the store opened is neither read through (their values are not taken for the store's) nor
    /// written through (the write neither lands in their file nor takes its owner and mode).
    @Test(.enabled(if: geteuid() == 0, "needs root to make a link owned by another user"))
    func aLinkPlantedInASharedDirectoryAfterOpeningIsNotFollowed() throws {
        try withTemporaryDirectory { directory in
            let shared = directory.path("shared")
            try FileManager.default.createDirectory(atPath: shared, withIntermediateDirectories: true)
            #expect(chmod(shared, 0o1777) == 0)
            let path = shared + "/app.json"
            let store = try JSONFileProvider(path: path, options: .init(watchesExternalChanges: false))
            #expect(try store.value(forKey: "server.url") == nil)

            let theirs = directory.path("theirs.json")
            let planted = Array(#"{"server.url": "https://attacker.example"}"#.utf8)
            #expect(FileManager.default.createFile(atPath: theirs, contents: Data(planted)))
            #expect(chown(theirs, 65534, 65534) == 0 && chmod(theirs, 0o666) == 0)
            try FileManager.default.createSymbolicLink(atPath: path, withDestinationPath: theirs)
            #expect(lchown(path, 65534, 65534) == 0)

            // A reload (here asked for; a watcher or a write makes one) reads nothing through it.
            let read = defaultsError { try store.synchronize() }
            #expect(read?.code == .permissionDenied)
            #expect((try? store.value(forKey: "server.url")) ?? nil == nil)
            let write = defaultsError { try store.setValue(.string("https://mine.example"), forKey: "server.url") }
            #expect(write?.code == .permissionDenied)
            #expect(try FileFacts.bytes(theirs) == Data(planted))
            #expect(try FileManager.default.destinationOfSymbolicLink(atPath: path) == theirs)
            // A fresh instance refuses the link as well.
            #expect(defaultsError { _ = try JSONFileProvider(path: path).value(forKey: "server.url") } != nil)
        }
    }

    @Test func aReadOnlyFileIsReadAndNeverReplaced() throws {
        try withTemporaryDirectory { directory in
            let path = directory.path("s.json")
            try JSONFileProvider(path: path).setValue(.int(1), forKey: "k")
            #expect(chmod(path, 0o400) == 0)
            let before = try FileFacts.bytes(path)
            let store = try JSONFileProvider(path: path, options: .init(watchesExternalChanges: false))
            #expect(try store.value(forKey: "k") == .int(1))
            for write in [{ try store.setValue(.int(2), forKey: "k") }, { try store.removeAll() }, { _ = try store.removeValues(ifUnchanged: ["k": .int(1)]) }] {
                let error = try #require(defaultsError(write))
                #expect(error.code == .permissionDenied)
            }
            #expect(try FileFacts.bytes(path) == before)
            #expect(try store.value(forKey: "k") == .int(1))
        }
    }

    @Test func aFIFOIsRefusedWithoutWaiting() throws {
        try withTemporaryDirectory { directory in
            #expect(mkfifo(directory.path("fifo.json"), 0o600) == 0)
            let error = try #require(defaultsError { _ = try JSONFileProvider(path: directory.path("fifo.json")) })
            #expect(error.code == .invalidConfiguration)
            #expect(error.description.contains("FIFO"))
        }
    }

    @Test func aNameWithoutRoomForItsSidecarsIsRefusedOnOpening() throws {
        try withTemporaryDirectory { directory in
            let longest = 255 - JSONFileDisk.longestSidecarSuffix
            _ = try JSONFileProvider(path: directory.path(String(repeating: "a", count: longest)))
            let error = try #require(defaultsError { _ = try JSONFileProvider(path: directory.path(String(repeating: "a", count: longest + 1))) })
            #expect(error.code == .invalidConfiguration)
        }
    }

    @Test(arguments: ["1e400", "-1e309", "1e-400", "-2e-324", "1" + String(repeating: "0", count: 400) + ".5"])
    func aNumberNoDoubleHoldsIsRefused(_ literal: String) throws {
        for text in ["{\"k\": \(literal)}", "{\"k\": [\(literal)]}", "{\"k\": {\"$double\": \(literal)}}", "{\"k\": {\"$date\": \(literal)}}"] {
            #expect(throws: JSONFileParseError.self) { try JSONFileDecoder.decode(Array(text.utf8)) }
            let error = try #require(defaultsError { _ = try ExactJSON.store(from: Data(text.utf8)) })
            #expect(error.message.contains("double"), "\(error.message)")
        }
        #expect(throws: DefaultsError.self) { try ExactJSON.value(from: literal) }
        if case .success = ExactJSON.double(fromLiteral: literal) { Issue.record("\(literal) read as a double") }
    }

    @Test func numbersADoubleHoldsAreRead() throws {
        let cases: [(String, Double)] = [("0.0", 0), ("-0.0", -0.0), ("0e-999", 0), ("4.9e-324", .leastNonzeroMagnitude), ("1.7976931348623157e308", .greatestFiniteMagnitude), ("1e-320", Double("1e-320")!)]
        for (literal, value) in cases {
            #expect(try ExactJSON.value(from: literal) == .double(value), "\(literal)")
        }
    }
}
