@testable import AnyDefaultsCore
import Foundation
import Testing
import TestSupport

import AnyDefaultsPlatform

/// The journal file alone: what a reopened journal reads back after appends, cut-short or damaged
/// records, resets and files that are not journals.
@Suite struct JournalFileTests {
    static func open(_ path: String, capacity: Int = 4096) throws(DefaultsError) -> JournalFile {
        try JournalFile(path: path, capacity: capacity, like: nil, backend: "Journal")
    }

    static func payloads(_ file: JournalFile) -> [[UInt8]] {
        file.records().map { Array($0) }
    }

    static func append(_ file: JournalFile, _ payload: [UInt8]) -> Bool {
        payload.withUnsafeBytes { file.append($0) }
    }

    /// Overwrites bytes of a closed journal at `offset`.
    static func damage(_ path: String, at offset: Int, with bytes: [UInt8]) throws {
        let handle = try #require(FileHandle(forUpdatingAtPath: path))
        try handle.seek(toOffset: UInt64(offset))
        try handle.write(contentsOf: Data(bytes))
        try handle.close()
    }

    @Test func aReopenedJournalReadsBackEveryWholeRecordInOrder() throws {
        try withTemporaryDirectory { directory in
            let path = directory.path("store.journal")
            var random = SeededGenerator(seed: 11)
            var written: [[UInt8]] = []
            do {
                let file = try Self.open(path)
                #expect(file.isEmpty)
                while true {
                    let payload = (0..<Int.random(in: 1...200, using: &random)).map { _ in UInt8.random(in: 0...255, using: &random) }
                    guard Self.append(file, payload) else { break }
                    written.append(payload)
                }
                #expect(written.count > 10)
            }
            let file = try Self.open(path)
            #expect(Self.payloads(file) == written)
            #expect(!file.isEmpty)
        }
    }

    /// A record cut short or damaged anywhere (a kill during the copy, a damaged page) ends what
    /// is read: every record before it is read, none after, and the next append goes after the
    /// last whole record. Generated cuts over every part of a record.
    @Test(arguments: 0..<40)
    func readingStopsAtTheFirstRecordThatIsNotWhole(seed: UInt64) throws {
        try withTemporaryDirectory { directory in
            let path = directory.path("store.journal")
            var random = SeededGenerator(seed: seed)
            var written: [[UInt8]] = []
            var offsets: [Int] = []
            do {
                let file = try Self.open(path)
                for _ in 0..<Int.random(in: 2...12, using: &random) {
                    let payload = (0..<Int.random(in: 1...300, using: &random)).map { _ in UInt8.random(in: 0...255, using: &random) }
                    offsets.append(file.end)
                    #expect(Self.append(file, payload))
                    written.append(payload)
                }
            }
            let damaged = Int.random(in: 0..<written.count, using: &random)
            let recordSize = JournalFile.recordSize(payloadCount: written[damaged].count)
            // Any byte of the record but its padding: the length, the zeros, the generation, the checksum, the payload.
            let byte = Int.random(in: 0..<(JournalFile.recordHeaderSize + written[damaged].count), using: &random)
            guard byte != 4 && byte != 5 && byte != 6 && byte != 7 else { return }  // the 4 bytes of zero are not checked
            let data = try Data(contentsOf: URL(fileURLWithPath: path))
            try Self.damage(path, at: offsets[damaged] + byte, with: [data[offsets[damaged] + byte] ^ UInt8.random(in: 1...255, using: &random)])
            #expect(recordSize > 0)

            let file = try Self.open(path)
            #expect(Self.payloads(file) == Array(written.prefix(damaged)))
            #expect(Self.append(file, [42]))
            #expect(file.end == offsets[damaged] + JournalFile.recordSize(payloadCount: 1))
        }
    }

    @Test func aResetJournalReadsNothingThoughItsBytesRemain() throws {
        try withTemporaryDirectory { directory in
            let path = directory.path("store.journal")
            do {
                let file = try Self.open(path)
                #expect(Self.append(file, [1, 2, 3]))
                #expect(Self.append(file, [4, 5]))
                file.reset()
                #expect(file.isEmpty)
                #expect(Self.append(file, [6]))
            }
            let file = try Self.open(path)
            #expect(Self.payloads(file) == [[6]])
        }
    }

    @Test func aRecordTooLargeForTheJournalIsRefusedWithNothingWritten() throws {
        try withTemporaryDirectory { directory in
            let file = try Self.open(directory.path("store.journal"))
            #expect(!file.canEverHold(payloadCount: file.capacity))
            #expect(!Self.append(file, [UInt8](repeating: 7, count: file.capacity)))
            #expect(file.isEmpty)
            let fits = file.capacity - JournalFile.headerSize - JournalFile.recordHeaderSize
            #expect(file.canEverHold(payloadCount: fits))
            #expect(Self.append(file, [UInt8](repeating: 7, count: fits)))
            #expect(!Self.append(file, [1]))
        }
    }

    /// One process, one holder: a second open of the file (here or in another process) is `busy`.
    @Test func aJournalHasOneHolder() throws {
        try withTemporaryDirectory { directory in
            let path = directory.path("store.journal")
            do {
                let first = try Self.open(path)
                do {
                    _ = try Self.open(path)
                    Issue.record("a second holder")
                } catch {
                    #expect((error as? DefaultsError)?.code == .busy)
                }
                withExtendedLifetime(first) {}
            }
            // Closed, the journal can be opened again.
            _ = try Self.open(path)
        }
    }

    @Test func aFileThatIsNotAJournalIsLeftAlone() throws {
        try withTemporaryDirectory { directory in
            let path = directory.path("store.journal")
            let contents = Data("{\"not\": \"a journal\"}".utf8)
            try contents.write(to: URL(fileURLWithPath: path))
            do {
                _ = try Self.open(path)
                Issue.record("opened a file that is not a journal")
            } catch {
                #expect((error as? DefaultsError)?.code == .incompatibleFormat)
            }
            #expect(try Data(contentsOf: URL(fileURLWithPath: path)) == contents)
        }
    }

    @Test func aLinkWhereTheJournalBelongsIsRefused() throws {
        try withTemporaryDirectory { directory in
            let target = directory.path("elsewhere")
            _ = FileManager.default.createFile(atPath: target, contents: Data())
            let path = directory.path("store.journal")
            try FileManager.default.createSymbolicLink(atPath: path, withDestinationPath: target)
            do {
                _ = try Self.open(path)
                Issue.record("followed a link")
            } catch {
                #expect((error as? DefaultsError)?.code == .permissionDenied)
            }
            #expect(try FileManager.default.attributesOfItem(atPath: target)[.size] as? Int == 0)
        }
    }

    /// Root opening a user's store: a journal another user planted beside it (a shared directory)
    /// is refused and left alone; a journal root makes is the store owner's.
    @Test(.enabled(if: geteuid() == 0)) func aJournalOfAnotherUserThanTheStoresIsRefused() throws {
        try withTemporaryDirectory { directory in
            let store = directory.path("store")
            let path = directory.path("store.journal")
            _ = FileManager.default.createFile(atPath: store, contents: Data("store".utf8))
            #expect(chown(store, 4242, 4242) == 0)
            do {
                let file = try JournalFile(path: path, capacity: 4096, like: store, backend: "Journal")
                var info = stat()
                #expect(stat(path, &info) == 0 && info.st_uid == 4242)
                withExtendedLifetime(file) {}
            }
            #expect(unlink(path) == 0)
            // Empty, as a planted file is before anything is written to it.
            _ = FileManager.default.createFile(atPath: path, contents: Data())
            #expect(chown(path, 5353, 5353) == 0)
            do {
                _ = try JournalFile(path: path, capacity: 4096, like: store, backend: "Journal")
                Issue.record("replayed another user's journal")
            } catch {
                #expect((error as? DefaultsError)?.code == .permissionDenied)
            }
            var info = stat()
            #expect(stat(path, &info) == 0 && info.st_size == 0 && info.st_uid == 5353)
        }
    }

    /// A hard link to another file where the journal belongs (the store itself, another user's
    /// file) is refused and left as it is.
    @Test func aHardLinkWhereTheJournalBelongsIsRefused() throws {
        try withTemporaryDirectory { directory throws in
            let other = directory.path("other")
            _ = FileManager.default.createFile(atPath: other, contents: Data())
            let path = directory.path("store.journal")
            #expect(link(other, path) == 0)
            do {
                _ = try Self.open(path)
                Issue.record("a hard link was taken for the journal")
            } catch {
                #expect((error as? DefaultsError)?.code == .permissionDenied)
            }
            #expect(try Data(contentsOf: URL(fileURLWithPath: other)).isEmpty)
        }
    }

    /// A journal emptied gets a generation no one can guess: a record laid out, for the
    /// generation that would come next if it counted up, in the bytes an older record left where
    /// the next record will end (a value an application stored, chosen by an attacker) is not read
    /// after the new records.
    @Test func aRecordForgedInStaleBytesIsNotRead() throws {
        try withTemporaryDirectory { directory in
            let path = directory.path("store.journal")
            let small: [UInt8] = [9, 9, 9, 9]
            // Where the forged record lies: right after one small record of the next generation.
            let forgedOffset = JournalFile.headerSize + JournalFile.recordSize(payloadCount: small.count)
            var generations: Set<UInt64> = []
            for _ in 0..<10 {
                do {
                    let file = try Self.open(path)
                    generations.insert(file.generation)
                    let next = file.generation &+ 1
                    let forgedPayload: [UInt8] = [1, 2, 3]
                    var forged = [UInt8](repeating: 0, count: JournalFile.recordSize(payloadCount: forgedPayload.count))
                    forged.withUnsafeMutableBytes { bytes in
                        bytes.storeBytes(of: UInt32(forgedPayload.count).littleEndian, as: UInt32.self)
                        bytes.storeBytes(of: next.littleEndian, toByteOffset: 8, as: UInt64.self)
                        let checksum = forgedPayload.withUnsafeBytes { JournalFile.checksum(length: UInt32(forgedPayload.count), generation: next, $0) }
                        bytes.storeBytes(of: checksum.littleEndian, toByteOffset: 16, as: UInt64.self)
                        for (index, byte) in forgedPayload.enumerated() { bytes[JournalFile.recordHeaderSize + index] = byte }
                    }
                    // A stored value whose bytes put the forged record at `forgedOffset`.
                    let lead = forgedOffset - JournalFile.headerSize - JournalFile.recordHeaderSize
                    #expect(Self.append(file, [UInt8](repeating: 7, count: lead) + forged + [UInt8](repeating: 7, count: 64)))
                    file.reset()
                    #expect(Self.append(file, small))
                }
                // The process was "killed" here: what a new open reads.
                #expect(Self.payloads(try Self.open(path)) == [small])
                // Emptied for the next round.
                try Self.open(path).reset()
            }
            #expect(generations.count == 10)
        }
    }

    /// A header of zeros is what a creation cut short leaves: it is a new journal.
    @Test func aJournalOfZerosIsANewOne() throws {
        try withTemporaryDirectory { directory in
            let path = directory.path("store.journal")
            try Data(count: 100).write(to: URL(fileURLWithPath: path))
            let file = try Self.open(path)
            #expect(file.isEmpty)
            #expect(Self.payloads(file).isEmpty)
            #expect(file.capacity >= 4096)
        }
    }

    @Test func recordsRoundTripEveryOperation() throws {
        var bytes: [UInt8] = []
        let operations: [JournalRecord.Operation] = [
            .set("a", .int(-5)), .remove("b"), .clear, .set("ключ", .dictionary(["x": .array([.double(-0.0), .string("é")])])),
        ]
        for operation in operations {
            switch operation {
            case .set(let key, let value): JournalRecord.appendSet(key, value, to: &bytes)
            case .remove(let key): JournalRecord.appendRemove(key, to: &bytes)
            case .clear: JournalRecord.appendClear(to: &bytes)
            }
        }
        #expect(try bytes.withUnsafeBytes { try JournalRecord.operations(in: $0) } == operations)
        bytes.append(0x7F)
        #expect(throws: BinaryCodecError.self) { try bytes.withUnsafeBytes { try JournalRecord.operations(in: $0) } }
    }
}
