import AnyDefaultsCore
@testable import AnyDefaultsUserDefaults
import Foundation
import TestSupport
import Testing

/// The UserDefaults backend's suite file under the core's rules for files (Linux, where the
/// provider writes the file), and the property-list import's refusal of duplicate keys.
@Suite struct SuiteFileRulesTests {
    #if !canImport(Darwin)
    @Test func aLinkedSuiteFileIsWrittenThroughAndStaysALink() throws {
        try withTestSuite { suite in
            let file = try #require(suite.fileURL).path
            let target = file + ".target"
            defer { try? FileManager.default.removeItem(atPath: target) }
            try FileManager.default.createSymbolicLink(atPath: file, withDestinationPath: target)
            let provider = try suite.provider()
            try provider.setValue(.int(1), forKey: "k")
            #expect((try? FileManager.default.destinationOfSymbolicLink(atPath: file)) == target)
            #expect(try ExactPropertyList.store(from: Data(contentsOf: URL(fileURLWithPath: target))) == ["k": .int(1)])
            // Emptied: the link stays, its target holds an empty dictionary.
            try provider.removeAll()
            #expect((try? FileManager.default.destinationOfSymbolicLink(atPath: file)) == target)
            #expect(try ExactPropertyList.store(from: Data(contentsOf: URL(fileURLWithPath: target))) == [:])
        }
    }

    /// A writer killed mid-write leaves its temporary file beside the suite's. Removing the suite
    /// (under the lock every writer takes) removes it at once, whatever its age, but never the
    /// temporary file of a process that still runs.
    @Test func removingASuiteRemovesTheTemporaryFileOfAKilledWriter() throws {
        try withTestSuite { suite in
            try suite.provider().setValue(.int(1), forKey: "k")
            let file = try #require(suite.fileURL).path
            let directory = (file as NSString).deletingLastPathComponent
            let prefix = "." + (file as NSString).lastPathComponent + ".tmp-"
            // A process that has ended: its id names no running process.
            let ended = Process()
            ended.executableURL = URL(fileURLWithPath: "/bin/true")
            try ended.run()
            ended.waitUntilExit()
            let abandoned = directory + "/" + prefix + "\(ended.processIdentifier)-abc"
            let live = directory + "/" + prefix + "\(getpid())-def"
            for path in [abandoned, live] { #expect(FileManager.default.createFile(atPath: path, contents: Data("<plist".utf8))) }
            defer { unlink(live) }
            try UserDefaultsProvider.removeSuite(named: suite.name)
            #expect(!FileManager.default.fileExists(atPath: abandoned), "a killed writer's temporary file stays")
            #expect(FileManager.default.fileExists(atPath: live), "a running process's temporary file was removed")
        }
    }

    @Test func aReadOnlySuiteFileIsReadAndNeverReplacedOrRemoved() throws {
        try withTestSuite { suite in
            let provider = try suite.provider()
            try provider.setValue(.int(1), forKey: "k")
            let file = try #require(suite.fileURL).path
            #expect(chmod(file, 0o400) == 0)
            defer { chmod(file, 0o600) }
            let before = FileManager.default.contents(atPath: file)
            #expect(try provider.value(forKey: "k") == .int(1))
            for write in [{ try provider.setValue(.int(2), forKey: "k") }, { try provider.removeAll() }, { try provider.removeValue(forKey: "k") }] {
                #expect(throws: DefaultsError.self, performing: write)
                #expect(FileManager.default.contents(atPath: file) == before)
            }
            let error = try #require(throws: DefaultsError.self) { try provider.removeAll() }
            #expect(error.code == .permissionDenied)
        }
    }

    @Test func aFIFOSuiteFileIsRefusedWithoutWaiting() throws {
        try withTestSuite { suite in
            let file = try #require(suite.fileURL).path
            try FileManager.default.createDirectory(atPath: (file as NSString).deletingLastPathComponent, withIntermediateDirectories: true)
            #expect(mkfifo(file, 0o600) == 0)
            defer { unlink(file) }
            let error = try #require(throws: DefaultsError.self) { _ = try suite.provider() }
            #expect(error.code == .invalidConfiguration)
        }
    }

    @Test func aSuiteNameWithoutRoomForItsSidecarsIsRefusedOnOpening() throws {
        #expect(throws: DefaultsError.self) { try UserDefaultsProvider(suiteName: String(repeating: "s", count: 230)) }
        let fits = "anydefaults-test-" + String(repeating: "s", count: 255 - 6 - PropertyListFile.longestSidecarSuffix - 17)
        defer { try? UserDefaultsProvider.removeSuite(named: fits) }
        try UserDefaultsProvider(suiteName: fits).setValue(.int(1), forKey: "k")
    }
    #endif

    @Test func anImportedPropertyListThatNamesAKeyTwiceIsRefused() throws {
        func xml(_ body: String) -> Data {
            Data(#"<?xml version="1.0" encoding="UTF-8"?><plist version="1.0"><dict>\#(body)</dict></plist>"#.utf8)
        }
        let duplicates = [
            xml("<key>a</key><integer>1</integer><key>a</key><integer>2</integer>"),
            xml("<key>o</key><dict><key>x</key><true/><key>x</key><true/></dict>"),
            xml("<key>\u{E9}</key><integer>1</integer><key>e\u{301}</key><integer>2</integer>"),
        ]
        for data in duplicates {
            let error = try #require(throws: DefaultsError.self) { try ExactPropertyList.store(from: data) }
            #expect(error.code == .corrupted)
        }
        // A comment or a CDATA section that mentions <key> is no key.
        let fine = xml("<!-- <key>a</key> --><key>a</key><string><![CDATA[<key>a</key>]]></string>")
        #expect(try ExactPropertyList.store(from: fine) == ["a": .string("<key>a</key>")])
        // Binary: the reader refuses a dictionary whose keys repeat, only when asked.
        var bytes = [UInt8](ExactPropertyList.data(from: ["ka": .int(1), "kb": .int(2)]))
        let at = try #require((0..<(bytes.count - 2)).first { bytes[$0] == 0x52 && bytes[$0 + 1] == UInt8(ascii: "k") && bytes[$0 + 2] == UInt8(ascii: "b") })
        bytes[at + 2] = UInt8(ascii: "a")
        #expect(throws: DefaultsError.self) { try ExactPropertyList.store(from: Data(bytes)) }
        #expect(throws: Never.self) { try BinaryPropertyListReader.read(bytes) }
    }
}
