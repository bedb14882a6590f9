#if !canImport(Darwin)
import AnyDefaultsCore
import AnyDefaultsUserDefaults
import Foundation
import Testing

/// A suite file that is not a valid property list is never taken for an empty suite and
/// overwritten (as Foundation on Linux would do): it is reported, or moved aside on request.
@Suite struct CorruptedSuiteFileTests {
    /// An XML property list whose top-level dictionary holds `entries`, as Foundation writes it.
    static func propertyList(_ entries: String) -> Data {
        Data(("<?xml version=\"1.0\" encoding=\"UTF-8\"?>\n<plist version=\"1.0\"><dict>\n" + entries + "\n</dict></plist>\n").utf8)
    }

    static let damaged = Data("not a property list: secret-token-1234 \u{0}\u{1}{(".utf8)

    @Test(arguments: [
        damaged,
        Data("<?xml version=\"1.0\"?><plist version=\"1.0\"><array><integer>1</integer></array></plist>".utf8),
        Data("bplist00".utf8) + Data(repeating: 0xFF, count: 40),
    ])
    func openingADamagedFileFailsAndLeavesItUntouched(content: Data) throws {
        try withTestSuite { suite in
            let url = try #require(suite.fileURL)
            try content.write(to: url)
            let error = #expect(throws: DefaultsError.self) { try suite.provider() }
            #expect(error?.code == .corrupted)
            #expect(error?.path == url.path)
            #expect(error?.backend == "UserDefaults")
            // The message may not quote the file: it may hold secrets.
            #expect(error.map { "\($0)".contains("secret-token") } == false)
            #expect(try Data(contentsOf: url) == content)
        }
    }

    @Test func recoveryMovesTheFileAsideAndStartsEmpty() throws {
        try withTestSuite { suite in
            let url = try #require(suite.fileURL)
            try Self.damaged.write(to: url)
            let store = try suite.provider(.init(recoverCorruptedFile: true))
            #expect(try store.keys().isEmpty)
            let movedAside = suite.leftovers.filter { $0.lastPathComponent.hasPrefix(suite.name + ".plist.corrupted-") }
            #expect(movedAside.count == 1)
            #expect(try movedAside.first.map { try Data(contentsOf: $0) } == Self.damaged)
            try store.setValue(.int(1), forKey: "fresh")
            #expect(try suite.provider().value(forKey: "fresh") == .int(1))
        }
    }

    @Test func damageAfterOpeningIsReportedAndNeverOverwritten() throws {
        try withTestSuite { suite in
            let url = try #require(suite.fileURL)
            let store = try suite.provider()
            try store.setValue(.int(1), forKey: "a")
            try Self.damaged.write(to: url)

            let readError = #expect(throws: DefaultsError.self) { try store.refresh() }
            #expect(readError?.code == .corrupted)
            let writeError = #expect(throws: DefaultsError.self) { try store.setValue(.int(2), forKey: "b") }
            #expect(writeError?.code == .corrupted)
            #expect(try Data(contentsOf: url) == Self.damaged)

            // Repairing the file makes the provider work again.
            try FileManager.default.removeItem(at: url)
            try store.refresh()
            #expect(try store.keys().isEmpty)
        }
    }

    @Test func anEmptyFileIsAnEmptySuite() throws {
        try withTestSuite { suite in
            let url = try #require(suite.fileURL)
            try Data().write(to: url)
            let store = try suite.provider()
            #expect(try store.keys().isEmpty)
            try store.setValue(.bool(true), forKey: "k")
            #expect(try suite.provider().value(forKey: "k") == .bool(true))
        }
    }

    @Test func keysSpelledInBothNormalizationFormsAreOneKey() throws {
        try withTestSuite { suite in
            let url = try #require(suite.fileURL)
            try Self.propertyList("""
                <key>caf\u{E9}</key><integer>1</integer><key>cafe\u{301}</key><integer>1</integer>
                <key>nested</key><dict><key>caf\u{E9}</key><true/><key>cafe\u{301}</key><true/></dict>
                """).write(to: url)
            let store = try suite.provider()
            #expect(try store.allValues() == ["caf\u{E9}": .int(1), "nested": .dictionary(["caf\u{E9}": .bool(true)])])
            try store.setValue(.int(2), forKey: "cafe\u{301}")
            #expect(try store.value(forKey: "caf\u{E9}") == .int(2))
        }
    }

    @Test func quickRewritesInPlaceOfTheSameSizeAreNoticed() throws {
        try withTestSuite { suite in
            let url = try #require(suite.fileURL)
            try Self.propertyList("<key>count</key><integer>0</integer>").write(to: url)
            let store = try suite.provider()
            // As Foundation writes: truncate and rewrite the same file, quickly and with the same
            // size. (Where file times are as coarse as the kernel's clock tick, the stamp may not
            // change at all; the provider then reads a recently modified file again.)
            for count in 1...3 {
                let handle = try FileHandle(forUpdating: url)
                try handle.truncate(atOffset: 0)
                try handle.write(contentsOf: Self.propertyList("<key>count</key><integer>\(count)</integer>"))
                try handle.close()
                try store.refresh()
                #expect(try store.value(forKey: "count") == .int(Int64(count)))
            }
        }
    }

    @Test func entriesDefaultsValueCannotHoldAreKeptUntilWritten() throws {
        try withTestSuite { suite in
            let url = try #require(suite.fileURL)
            try Self.propertyList("""
                <key>huge</key><integer>18446744073709551615</integer>
                <key>plain</key><string>kept</string>
                """).write(to: url)
            let store = try suite.provider()
            #expect(try store.allValues() == ["plain": .string("kept")])

            try store.setValue(.int(1), forKey: "mine")
            let written = try #require(
                try PropertyListSerialization.propertyList(from: Data(contentsOf: url), format: nil) as? [String: Any])
            #expect((written["huge"] as? NSNumber)?.uint64Value == .max)

            try store.removeValue(forKey: "huge")
            let removed = try #require(
                try PropertyListSerialization.propertyList(from: Data(contentsOf: url), format: nil) as? [String: Any])
            #expect(removed["huge"] == nil)
            #expect(try store.allValues() == ["plain": .string("kept"), "mine": .int(1)])
        }
    }
}
#endif
