import AnyDefaults
import Foundation
import Testing
import TestSupport

/// Damaged store files: truncated, zeroed, bit-flipped and garbage. Opening and reading them gives
/// a `DefaultsError` (or, where the bytes still decode, values; never an empty store), never a
/// crash; the damaged file stays on disk byte for byte unless recovery was asked for, and then it
/// is kept aside.
@Suite(.ownThreads) struct CorruptionTests {
    /// A value no error message may quote.
    static let secret = "SECRET-\(UUID().uuidString)"

    /// What the stores hold before they are damaged.
    static let contents: [String: DefaultsValue] = [
        "password": .string(secret),
        "token": .data(Data(secret.utf8)),
        "count": .int(42),
        "ratio": .double(0.25),
        "flag": .bool(true),
        "when": .date(Date(timeIntervalSinceReferenceDate: 1_000)),
        "list": .array([.int(1), .string("two"), .double(3)]),
        "nested": .dictionary(["inner": .dictionary(["secret": .string(secret)]), "n": .int(7)]),
        "ключ": .string("значение"),
    ]

    /// Backends on which an empty (zero-length) file is an empty store by design: there is nothing
    /// in it to lose. UserDefaults: Foundation on Linux treats it so, and a crash of Foundation's
    /// own in-place rewrite leaves one.
    static let emptyFileIsEmptyStore: Set<String> = ["userdefaults", "sqlite", "lmdb"]

    /// Backends that map their file into memory: a file overwritten by another program while a
    /// store is open is read as it changes, without checks (liblmdb asserts and aborts on a
    /// garbage page; a shortened file raises SIGBUS). Damage after opening is outside what they
    /// can detect; damage before opening is checked (the matrix above).
    static let mapsItsFile: Set<String> = ["lmdb"]

    /// One way of damaging a file.
    struct Damage: CustomStringConvertible {
        var description: String
        var apply: @Sendable ([UInt8]) -> [UInt8]
    }

    /// The matrix: truncations, zeroing, seeded bit flips and garbage.
    static func damages(length: Int) -> [Damage] {
        var damages: [Damage] = []
        for size in Set([0, 1, 8, 16, length / 4, length / 2, length - 1].filter { $0 >= 0 && $0 < length }).sorted() {
            damages.append(Damage(description: "truncated to \(size) bytes") { Array($0.prefix(size)) })
        }
        damages.append(Damage(description: "zeroed") { [UInt8](repeating: 0, count: $0.count) })
        damages.append(Damage(description: "first 4096 bytes zeroed") { bytes in
            [UInt8](repeating: 0, count: min(4096, bytes.count)) + bytes.dropFirst(4096)
        })
        var random = SeededGenerator(seed: 0xC0FFEE)
        for flips in [1, 1, 1, 1, 1, 1, 1, 1, 1, 1, 1, 1, 1, 1, 1, 1, 4, 4, 4, 4, 16, 16] {
            let positions = (0..<flips).map { _ in (Int(random.next() % UInt64(length)), UInt8(1) << (random.next() % 8)) }
            damages.append(Damage(description: "\(flips) bits flipped at \(positions.map(\.0))") { bytes in
                var bytes = bytes
                for (position, mask) in positions where position < bytes.count { bytes[position] ^= mask }
                return bytes
            })
        }
        let garbage = (0..<length).map { _ in UInt8(truncatingIfNeeded: random.next()) }
        damages.append(Damage(description: "random bytes") { _ in garbage })
        damages.append(Damage(description: "text") { _ in Array("this is not a settings store \(secret)\n".utf8) })
        return damages
    }

    @Test(arguments: TestStore.persistentSchemes)
    func damagedFilesGiveTypedErrorsAndStayOnDisk(scheme: String) throws {
        try withTestStore(scheme) { store, _ in
            try Self.seed(store)
            let original = try Self.bytes(store.dataFile)
            try #require(!original.isEmpty)
            var outcomes: [String: Int] = [:]
            for damage in Self.damages(length: original.count) {
                let damaged = damage.apply(original)
                try Self.write(damaged, to: store.dataFile)
                let outcome = Self.openAndRead(store)
                if ProcessInfo.processInfo.environment["ANYDEFAULTS_CORRUPTION_VERBOSE"] != nil {
                    print("corruption \(scheme): \(damage): \(outcome.map { "read \($0.count) keys" })")
                }
                switch outcome {
                case .failure(let error):
                    outcomes["error \(error.code)", default: 0] += 1
                    #expect([.corrupted, .incompatibleFormat].contains(error.code), "\(damage): \(error)")
                    #expect(error.path != nil, "\(damage): the error names no file")
                    Self.expectNoSecret(in: error, damage)
                case .success(let values):
                    outcomes["read", default: 0] += 1
                    // An empty file holds nothing to lose; SQLite and LMDB make it a new store.
                    if damaged.isEmpty, Self.emptyFileIsEmptyStore.contains(scheme) { continue }
                    #expect(!values.isEmpty, "\(damage): the damaged store read as empty")
                }
                #expect(try Self.bytes(store.dataFile) == damaged, "\(damage): the damaged file was changed")
            }
            print("corruption \(scheme): \(outcomes.sorted { $0.key < $1.key }.map { "\($0.key): \($0.value)" }.joined(separator: ", "))")
        }
    }

    @Test(arguments: TestStore.persistentSchemes.filter { !CorruptionTests.mapsItsFile.contains($0) })
    func damageWhileOpenIsReportedAndNeverOverwritten(scheme: String) throws {
        try withTestStore(scheme) { store, _ in
            try Self.seed(store)
            let provider = try store.open()
            let garbage = Array("{ not a store \(Self.secret)".utf8) + [UInt8](repeating: 0xFF, count: 64)
            try Self.write(garbage, to: store.dataFile)
            let error = #expect(throws: DefaultsError.self) { try provider.setValue(.int(1), forKey: "after-damage") }
            if let error { Self.expectNoSecret(in: error, "damage while open") }
            #expect(try Self.bytes(store.dataFile) == garbage)
        }
    }

    /// The opt-in recovery of each backend: the bad file is kept aside, byte for byte, and the
    /// store starts empty and works.
    @Test(arguments: [("json", "recovery=moveaside"), ("userdefaults", "recover=on")])
    func recoveryKeepsTheBadFileAside(scheme: String, option: String) throws {
        try withTestStore(scheme) { store, _ in
            try Self.seed(store)
            let garbage = Array("garbage \(Self.secret)".utf8)
            try Self.write(garbage, to: store.dataFile)
            let provider = try ProviderRegistry.standard.makeProvider(store.string(option))
            #expect(try provider.allValues().isEmpty)
            let directory = (store.dataFile as NSString).deletingLastPathComponent
            let name = (store.dataFile as NSString).lastPathComponent
            let kept = try FileManager.default.contentsOfDirectory(atPath: directory)
                .filter { $0.hasPrefix(name + ".corrupt") }
            #expect(kept.count == 1)
            #expect(try kept.first.map { try Self.bytes(directory + "/" + $0) } == garbage)
            try provider.setValue(.int(1), forKey: "fresh")
            #expect(try store.open().value(forKey: "fresh") == .int(1))
        }
    }

    /// Random damage (bit flips, overwritten runs, a zeroed page, a cut), each opened and read in
    /// a fresh process, so that a crash is counted rather than fatal: every outcome must be data
    /// or a `DefaultsError`. `ANYDEFAULTS_CORRUPTION_RUNS` sets the number of damages per backend
    /// (default 12). The seed is fixed: with it, damage 10 made liblmdb abort
    /// (`Assertion 'IS_LEAF(mp)' failed in mdb_cursor_next()`) before LMDBFileCheck walked every
    /// page it opens.
    @Test(arguments: TestStore.persistentSchemes)
    func randomDamageNeverCrashesAFreshProcess(scheme: String) throws {
        let runs = ProcessInfo.processInfo.environment["ANYDEFAULTS_CORRUPTION_RUNS"].flatMap { Int($0) } ?? 12
        try withTestStore(scheme, forChildren: true) { store, _ in
            let seeded = try ChildProcess.run("TestChild", ["touch", store.store], environment: store.environment)
            try #require(seeded.status == 0, "\(seeded.standardError)")
            let original = try Self.bytes(store.dataFile)
            var random = SeededGenerator(seed: 200 * 7919)
            var outcomes: [String: Int] = [:]
            for run in 0..<runs {
                let damaged = Self.randomDamage(original, using: &random)
                try Self.write(damaged, to: store.dataFile)
                let result = try ChildProcess.run("TestChild", ["read-all", store.store], environment: store.environment)
                let line = result.standardOutput.split(separator: "\n").last.map(String.init) ?? ""
                // A read that ends: every key read (status 0), or an error the child could report (status 1).
                guard !result.wasSignaled, (result.status == 0 && line.hasPrefix("read ")) || (result.status == 1 && line.hasPrefix("error ")) else {
                    Issue.record("damage \(run): status \(result.status)\(result.wasSignaled ? " (signal)" : ""): \(result.standardError.prefix(300))")
                    outcomes["crash", default: 0] += 1
                    continue
                }
                let outcome = line.hasPrefix("read ") ? "read" : String(line.split(separator: " ").prefix(2).joined(separator: " "))
                outcomes[outcome, default: 0] += 1
                if outcome == "error internalError" { print("random damage \(scheme) \(run): \(line)") }
                if line.hasPrefix("error ") {
                    #expect(try Self.bytes(store.dataFile) == damaged, "damage \(run): the damaged file was changed")
                }
            }
            print("random damage \(scheme): \(runs) runs, " + outcomes.sorted { $0.key < $1.key }.map { "\($0.key): \($0.value)" }.joined(separator: ", "))
        }
    }

    // The offsets below are those of a 64-bit build (decided at compile time).
    #if arch(x86_64) || arch(arm64) || arch(powerpc64le) || arch(s390x)
    /// An LMDB meta page whose last page lies beyond the map it records made every transaction fail
    /// with MDB_MAP_RESIZED, reported as `internalError` (found by the random damage above, 1 in
    /// 1 000); it is `corrupted`.
    @Test func anLMDBMetaPageBeyondItsMapIsCorrupted() throws {
        try withTestStore("lmdb", forChildren: true) { store, _ in
            let seeded = try ChildProcess.run("TestChild", ["touch", store.store], environment: store.environment)
            try #require(seeded.status == 0)
            var bytes = try Self.bytes(store.dataFile)
            // MDB_meta on a 64-bit system: page header (16), magic and version (8), address (8),
            // map size (8), two MDB_db of 48 bytes, then the last page number.
            let pageSize = 4096
            for meta in 0..<2 {
                let lastPage = meta * pageSize + 16 + 8 + 8 + 8 + 2 * 48
                for index in 0..<8 { bytes[lastPage + index] = index == 2 ? 0x10 : 0 }  // 2^20: a 4 GiB map
            }
            try Self.write(bytes, to: store.dataFile)
            let result = try ChildProcess.run("TestChild", ["read-all", store.store], environment: store.environment)
            #expect(result.standardOutput.hasPrefix("error corrupted"), "\(result.standardOutput)")
        }
    }

    /// A large value's node that points at a page claiming to be an overflow run of zero pages
    /// (page 0, the meta page, with the overflow flag added: LMDB's own meta check lets it pass)
    /// once made the open check's arithmetic wrap and stop the process; it is `corrupted`.
    @Test func anLMDBOverflowRunOfNoPagesIsCorrupted() throws {
        try withTestStore("lmdb", forChildren: true) { store, _ in
            let large = String(repeating: "v", count: 20_000)
            let seeded = try ChildProcess.run("TestChild", ["apply", store.store, "big:string=\(large)"], environment: store.environment)
            try #require(seeded.status == 0, "\(seeded.standardError)")
            var bytes = try Self.bytes(store.dataFile)
            let pageSize = 4096
            func u16(_ offset: Int) -> Int { Int(bytes[offset]) | Int(bytes[offset + 1]) << 8 }
            var pointed = 0
            // Every leaf node with F_BIGDATA (0x01): its data is the first page of the run.
            for page in stride(from: 2 * pageSize, to: bytes.count, by: pageSize) where u16(page + 10) & 0x02 != 0 {
                let lower = u16(page + 12)
                guard lower >= 16, lower <= pageSize else { continue }
                for index in 0..<(lower - 16) / 2 {
                    let node = page + u16(page + 16 + 2 * index)
                    guard node + 8 <= page + pageSize, u16(node + 4) & 0x01 != 0 else { continue }
                    let data = node + 8 + u16(node + 6)
                    for byte in 0..<8 { bytes[data + byte] = 0 }
                    pointed += 1
                }
            }
            try #require(pointed == 1, "the large value's node was not found")
            bytes[10] |= 0x04  // page 0: P_META | P_OVERFLOW
            for byte in 12..<16 { bytes[byte] = 0 }  // a run of 0 pages
            try Self.write(bytes, to: store.dataFile)
            let result = try ChildProcess.run("TestChild", ["read-all", store.store], environment: store.environment)
            #expect(!result.wasSignaled, "the check stopped the process: \(result.standardError)")
            #expect(result.standardOutput.hasPrefix("error corrupted"), "\(result.standardOutput) \(result.standardError)")
        }
    }
    #endif

    /// An SQLite header naming a schema format SQLite does not know ("unsupported file format",
    /// SQLITE_ERROR) was reported as `internalError` (found by the random damage above, 1 in
    /// 1 000); it is `corrupted`.
    @Test func anSQLiteHeaderOfAnUnknownFormatIsCorrupted() throws {
        try withTestStore("sqlite", forChildren: true) { store, _ in
            let seeded = try ChildProcess.run("TestChild", ["touch", store.store], environment: store.environment)
            try #require(seeded.status == 0)
            var bytes = try Self.bytes(store.dataFile)
            bytes.replaceSubrange(44..<48, with: [0, 0, 0, 99])  // the schema format number: 1 to 4
            try Self.write(bytes, to: store.dataFile)
            let result = try ChildProcess.run("TestChild", ["read-all", store.store], environment: store.environment)
            #expect(result.standardOutput.hasPrefix("error corrupted"), "\(result.standardOutput)")
        }
    }

    /// One random damage of `bytes`.
    static func randomDamage(_ bytes: [UInt8], using random: inout SeededGenerator) -> [UInt8] {
        var bytes = bytes
        guard !bytes.isEmpty else { return bytes }
        switch random.next() % 4 {
        case 0:
            for _ in 0..<(1 + Int(random.next() % 64)) {
                bytes[Int(random.next() % UInt64(bytes.count))] ^= UInt8(1) << (random.next() % 8)
            }
        case 1:
            let start = Int(random.next() % UInt64(bytes.count))
            for index in start..<min(bytes.count, start + 1 + Int(random.next() % 512)) {
                bytes[index] = UInt8(truncatingIfNeeded: random.next())
            }
        case 2:
            let page = Int(random.next() % UInt64(max(1, bytes.count / 4096)))
            for index in (page * 4096)..<min(bytes.count, page * 4096 + 4096) { bytes[index] = 0 }
        default:
            bytes.removeLast(1 + Int(random.next() % UInt64(bytes.count)))
        }
        return bytes
    }

    // MARK: Helpers

    static func seed(_ store: TestStore) throws {
        let provider = try store.open()
        try provider.apply(contents.map { .set($0.key, $0.value) })
        #expect(try provider.allValues() == contents)
    }

    /// Opens the store anew and reads everything.
    static func openAndRead(_ store: TestStore) -> Result<[String: DefaultsValue], DefaultsError> {
        do {
            let provider = try store.open()
            let values = try provider.allValues()
            _ = try provider.keys()
            for key in contents.keys { _ = try provider.value(forKey: key) }
            return .success(values)
        } catch let error as DefaultsError {
            return .failure(error)
        } catch {
            return .failure(DefaultsError(.internalError, "not a DefaultsError: \(error)", backend: "test"))
        }
    }

    static func expectNoSecret(in error: DefaultsError, _ context: CustomStringConvertible) {
        let texts = [error.description, String(reflecting: error), error.message, error.cause.map { "\($0)" } ?? ""]
        #expect(!texts.contains { $0.contains(secret) }, "\(context): the error quotes a stored value")
    }

    static func bytes(_ path: String) throws -> [UInt8] {
        [UInt8](try Data(contentsOf: URL(fileURLWithPath: path)))
    }

    static func write(_ bytes: [UInt8], to path: String) throws {
        try Data(bytes).write(to: URL(fileURLWithPath: path))
    }
}
