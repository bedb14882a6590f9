import AnyDefaults
import Foundation
import Testing
import TestSupport

/// Keys and values at and beyond the limits, on every backend: they work, or fail with a typed
/// error before anything is written; nothing crashes or overflows the stack.
@Suite(.ownThreads) struct LimitTests {
    @Test(arguments: TestStore.allSchemes)
    func longKeysWorkOrAreRejected(scheme: String) throws {
        try withTestStore(scheme) { store, _ in
            let provider = try store.open()
            // 1 KiB of UTF-8 is in the contract; longer keys work or are invalidKey.
            let kibibyte = String(repeating: "k", count: 1024)
            let unicode = String(repeating: "ключ🔑", count: 120)  // 1 200 bytes
            try provider.setValue(.int(1), forKey: kibibyte)
            try provider.setValue(.int(2), forKey: unicode)
            #expect(try provider.value(forKey: kibibyte) == .int(1))
            #expect(try provider.value(forKey: unicode) == .int(2))
            var outcomes: [String] = []
            for size in [4 << 10, 64 << 10, 1 << 20] {
                let key = String(repeating: "x", count: size)
                do {
                    try provider.setValue(.int(Int64(size)), forKey: key)
                    #expect(try provider.value(forKey: key) == .int(Int64(size)), "\(size)-byte key")
                    try provider.removeValue(forKey: key)
                    outcomes.append("\(size >> 10) KiB stored")
                } catch let error as DefaultsError {
                    #expect(error.code == .invalidKey, "\(size)-byte key: \(error)")
                    outcomes.append("\(size >> 10) KiB \(error.code)")
                }
            }
            print("limits \(scheme) keys: 1 KiB stored, " + outcomes.joined(separator: ", "))
            #expect(try Set(provider.keys()) == [kibibyte, unicode])
            #expect(try store.open().value(forKey: unicode) == .int(2))
        }
    }

    @Test(arguments: TestStore.allSchemes)
    func sixteenMebibyteValuesRoundTrip(scheme: String) throws {
        try withTestStore(scheme) { store, _ in
            var random = SeededGenerator(seed: 16)
            let bytes = Data((0..<(16 << 20) / 8).flatMap { _ in withUnsafeBytes(of: random.next()) { Array($0) } })
            let provider = try store.open()
            do {
                try provider.setValue(.data(bytes), forKey: "big")
            } catch let error as DefaultsError {
                // A backend may refuse a value this size, with a typed error.
                #expect(error.code == .invalidValue || error.code == .storageFull, "\(error)")
                return
            }
            #expect(try provider.value(forKey: "big") == .data(bytes))
            #expect(try store.open().value(forKey: "big") == .data(bytes))
        }
    }

    @Test(arguments: TestStore.allSchemes)
    func nanAndInfinitiesRoundTrip(scheme: String) throws {
        try withTestStore(scheme) { store, _ in
            let values: [String: DefaultsValue] = [
                "nan": .double(.nan), "signalingNaN": .double(.signalingNaN), "negativeNaN": .double(-.nan),
                "infinity": .double(.infinity), "negativeInfinity": .double(-.infinity), "negativeZero": .double(-0.0),
                "leastNonzero": .double(.leastNonzeroMagnitude), "greatest": .double(.greatestFiniteMagnitude),
                "dateNaN": .date(Date(timeIntervalSinceReferenceDate: .nan)),
                "dateInfinity": .date(Date(timeIntervalSinceReferenceDate: .infinity)),
                "dateNegativeInfinity": .date(Date(timeIntervalSinceReferenceDate: -.infinity)),
                "nested": .dictionary(["list": .array([.double(.nan), .double(-.infinity)])]),
            ]
            try store.open().apply(values.map { .set($0.key, $0.value) })
            let read = try store.open().allValues()
            // Compared outside #expect: describing a NaN date traps in Foundation on Linux.
            let same = read == values
            #expect(same)
            #expect(read["negativeZero"].map { if case .double(let d) = $0 { d.sign == .minus } else { false } } == true)
        }
    }

    /// Writes 64 KiB chunks (`chunk.0`, `chunk.1`...) until a write fails or 64 were written:
    /// the chunk, how many were written, and the error that stopped it.
    static func fillUntilFull(_ provider: any DefaultsProvider) -> (chunk: DefaultsValue, written: Int, full: DefaultsError?) {
        let chunk = DefaultsValue.data(Data(repeating: 7, count: 64 << 10))
        for written in 0..<64 {
            do {
                try provider.setValue(chunk, forKey: "chunk.\(written)")
            } catch {
                return (chunk, written, error)
            }
        }
        return (chunk, 64, nil)
    }

    /// `maxsize` is the most the store holds also when it is below the default initial map
    /// (4 MiB): `maxsize=1MiB` alone is not lifted to 4 MiB; and a `mapsize` above `maxsize` is a
    /// configuration error rather than a silent choice of one of them.
    @Test func lmdbMaxsizeBelowTheInitialMapIsHonoured() throws {
        try withTestStore("lmdb") { store, _ in
            let provider = try ProviderRegistry.standard.makeProvider(store.string("maxsize=1MiB"))
            let (chunk, written, full) = Self.fillUntilFull(provider)
            #expect(full?.code == .storageFull, "\(String(describing: full))")
            #expect(full?.message.contains("\(1 << 20) bytes") == true, "\(String(describing: full))")
            #expect(written > 2 && written < 16, "\(written) chunks of 64 KiB in a 1 MiB map")
            for index in 0..<written { #expect(try provider.value(forKey: "chunk.\(index)") == chunk) }
            let refused = #expect(throws: DefaultsError.self) {
                try ProviderRegistry.standard.makeProvider(store.string("mapsize=2MiB", "maxsize=1MiB"))
            }
            #expect(refused?.code == .invalidConfiguration && refused?.message.contains("larger than maxsize") == true)
        }
    }

    /// LMDB's map is bounded (`maxsize`): a write that needs more fails with `storageFull`, leaves
    /// no trace, and the store goes on working: what was there reads back, and freeing room lets
    /// writes succeed again (from the second commit after the freeing one; see below).
    @Test func lmdbMapFullIsStorageFullAndTheStoreGoesOn() throws {
        try withTestStore("lmdb") { store, _ in
            let provider = try ProviderRegistry.standard.makeProvider(store.string("mapsize=256KiB", "maxsize=1MiB"))
            let (chunk, written, full) = Self.fillUntilFull(provider)
            #expect(full?.code == .storageFull, "\(String(describing: full))")
            // The message names the option both ways (issue 27.6), and the error is the store's state.
            #expect(full?.message.contains("maxsize=") == true && full?.message.contains("LMDBProvider.Options.maximumMapSize") == true)
            #expect(full?.kind == .storeState && full?.isRetryable == false)
            #expect(written > 2, "the map held only \(written) chunks")
            // A batch that does not fit leaves no trace.
            let batch = #expect(throws: DefaultsError.self) {
                try provider.apply([.set("small", .int(1)), .set("big", .data(Data(count: 16 << 20)))])
            }
            #expect(batch?.code == .storageFull)
            #expect(try provider.value(forKey: "small") == nil)
            // Everything written before is intact, here and after reopening.
            for index in 0..<written { #expect(try provider.value(forKey: "chunk.\(index)") == chunk) }
            let reopened = try ProviderRegistry.standard.makeProvider(store.string("mapsize=256KiB", "maxsize=1MiB"))
            #expect(try reopened.keys().count == written)
            // Room freed, writes work again.
            do {
                try provider.apply((0..<written).map { .remove("chunk.\($0)") })
            } catch {
                Issue.record("removing everything from a full map failed: \(error)")
            }
            // LMDB keeps the pages of the last committed snapshot until the next commit, so the
            // first large write right after freeing may still find the map full; after one more
            // commit the room is there.
            var succeeded = false
            for attempt in 1...2 where !succeeded {
                do {
                    try provider.setValue(chunk, forKey: "again")
                    succeeded = true
                } catch let error as DefaultsError {
                    #expect(error.code == .storageFull && attempt == 1, "\(error)")
                    try provider.setValue(.int(1), forKey: "tick")
                }
            }
            #expect(succeeded, "no room after freeing the whole map")
            #expect(try reopened.value(forKey: "again") == chunk)
        }
    }

    // MARK: Deep nesting

    @Test(arguments: TestStore.allSchemes)
    func deepValuesAreRejectedBeforeAnythingIsWritten(scheme: String) throws {
        try withTestStore(scheme) { store, _ in
            let provider = try store.open()
            let limit = DefaultsValue.maximumNestingDepth
            // The deepest accepted value round-trips.
            let deepest = Deep.array(depth: limit)
            try provider.setValue(deepest, forKey: "deepest")
            #expect(try provider.value(forKey: "deepest") == deepest)
            #expect(try store.open().value(forKey: "deepest") == deepest)

            for depth in [limit + 1, 5_000, 100_000] {
                var value = Deep.mixed(depth: depth)
                defer { Deep.dismantle(&value) }
                let single = #expect(throws: DefaultsError.self) { try provider.setValue(value, forKey: "deep") }
                #expect(single?.code == .invalidValue)
                #expect(single?.key == "deep")
                let batch = #expect(throws: DefaultsError.self) {
                    try provider.apply([.set("before", .int(1)), .set("deep", value)])
                }
                #expect(batch?.code == .invalidValue)
                #expect(try provider.value(forKey: "before") == nil, "a rejected batch left a trace")
                #expect(try provider.value(forKey: "deep") == nil)
            }
        }
    }

    /// A recursive Codable type.
    indirect enum Nest: Codable, Equatable {
        case leaf
        case node([Nest])

        static func chain(_ depth: Int) -> Nest {
            var nest = Nest.leaf
            for _ in 0..<depth { nest = .node([nest]) }
            return nest
        }
    }

    final class Chain: Codable {
        var next: Chain?
        init(next: Chain?) { self.next = next }
    }

    @Test func deepCodableValuesFailCleanly() throws {
        for depth in [600, 5_000] {
            let nest = Nest.chain(depth)
            let encoding = #expect(throws: DefaultsError.self) { try DefaultsEncoder().encode(nest, forKey: "nest") }
            #expect(encoding?.code == .encodingFailed)
            var chain: Chain?
            for _ in 0..<depth { chain = Chain(next: chain) }
            let chained = #expect(throws: DefaultsError.self) { try DefaultsEncoder().encode(chain, forKey: "chain") }
            #expect(chained?.code == .encodingFailed)
            // Release the chain link by link: a recursive release of thousands of links is the
            // test's own risk, not the library's.
            while let link = chain { chain = link.next; link.next = nil }

            var value = Deep.mixed(depth: depth)
            defer { Deep.dismantle(&value) }
            let decoding = #expect(throws: DefaultsError.self) { try DefaultsDecoder().decode(Nest.self, from: value, forKey: "nest") }
            #expect(decoding?.code == .decodingFailed)
            let json = Data((String(repeating: "[", count: depth * 20) + String(repeating: "]", count: depth * 20)).utf8)
            let fromJSON = #expect(throws: DefaultsError.self) {
                try DefaultsDecoder(strategy: .jsonData).decode(Nest.self, from: .data(json))
            }
            #expect(fromJSON?.code == .decodingFailed)
        }
        // Through the facade, which reports instead of throwing.
        let defaults = Defaults(MemoryProvider(), errorHandler: { _ in })
        var value = Deep.array(depth: 5_000)
        defer { Deep.dismantle(&value) }
        #expect(throws: DefaultsError.self) { try defaults.throwing.set(value, forKey: "deep") }
        #expect(defaults.object(forKey: "deep") == nil)
    }

    @Test func deepJSONIsRejectedByTheReader() throws {
        for depth in [1_100, 100_000] {
            let text = String(repeating: "[", count: depth) + String(repeating: "]", count: depth)
            let value = #expect(throws: DefaultsError.self) { try ExactJSON.value(from: text) }
            #expect(value?.code == .invalidValue)
            let store = #expect(throws: DefaultsError.self) { try ExactJSON.store(from: Data(("{\"k\": " + text + "}").utf8)) }
            #expect(store?.code == .corrupted)
            let objects = String(repeating: "{\"a\":", count: depth) + "1" + String(repeating: "}", count: depth)
            #expect(throws: DefaultsError.self) { try ExactJSON.store(from: Data(objects.utf8)) }
        }
    }

    /// Deeply nested files of each persistent backend's own format.
    @Test(arguments: ["json", "userdefaults"])
    func deepFilesAreCorruptedNotCrashes(scheme: String) throws {
        try withTestStore(scheme) { store, _ in
            for file in Deep.files(scheme: scheme, depth: 100_000) {
                try Data(file).write(to: URL(fileURLWithPath: store.dataFile))
                let error = #expect(throws: DefaultsError.self) { _ = try store.open().allValues() }
                #expect(error?.code == .corrupted)
            }
        }
    }

    // MARK: Configuration

    static let badConfigurations = [
        "", " ", ":", "::", "?", "json", "json:", "json:?", "json:?=", "json:/tmp/x.json?=1",
        "json:/tmp/x.json?recovery", "json:/tmp/x.json?recovery=", "json:/tmp/x.json?recovery=maybe",
        "json:/tmp/x.json?locktimeout=-1", "json:/tmp/x.json?locktimeout=99999999999999999999",
        "json:/tmp/x.json?cache=perhaps", "json:/tmp/x.json?recovery=fail&recovery=fail", "json:/tmp/%zz.json",
        "json:/tmp/%", "json:/tmp/%2", "json://host/x.json", "json:/tmp/x.json?colour=red", "memory:somewhere",
        "nosuchscheme:x", "1json:x", "jsön:x", "json :x", "-:x", "userdefaults:a/b", "userdefaults:..",
        "userdefaults:NSGlobalDomain", "userdefaults:" + String(repeating: "s", count: 300), "userdefaults:a%00b",
        "userdefaults:x?recover=sometimes", "sqlite:", "sqlite:/tmp/x.sqlite?durability=maybe", "lmdb:",
        "lmdb:/tmp/x?mapsize=0", "lmdb:/tmp/x?mapsize=-5MiB", "lmdb:/tmp/x?mapsize=99999999999TiB", "lmdb:/tmp/x?mapsize=lots",
        String(repeating: "a", count: 100_000) + ":x", "json:" + String(repeating: "%", count: 10_000),
        "json:/tmp/x.json?" + String(repeating: "a=1&", count: 10_000), "\u{0}:x", "json:\u{0}", "json:/tmp/x.json\u{0}.evil", "json:/tmp/x%00.json",
        String(repeating: "é", count: 1000), "🙂:🙂",
    ]

    @Test func invalidConfigurationIsATypedError() {
        for text in Self.badConfigurations {
            do {
                let provider = try ProviderRegistry.standard.makeProvider(text)
                // Some of these are valid for a backend not registered in this build... or not at
                // all: none may open.
                Issue.record("\(text.prefix(60).debugDescription) opened \(type(of: provider))")
            } catch {
                #expect(
                    error.code == .invalidConfiguration || error.code == .notFound || error.code == .permissionDenied,
                    "\(text.prefix(60).debugDescription): \(error)")
            }
        }
    }

    /// C calls end a path at its first NUL: such a path would quietly name another file.
    @Test func pathsHoldingANULAreRejected() throws {
        try withTemporaryDirectory { directory in
            let error = #expect(throws: DefaultsError.self) {
                try JSONFileProvider(path: directory.path("a.json") + "\u{0}.b").setValue(.int(1), forKey: "k")
            }
            #expect(error?.code == .invalidConfiguration)
            let configured = #expect(throws: DefaultsError.self) {
                try ProviderRegistry.standard.makeProvider("json:" + directory.path("a.json") + "%00.b").setValue(.int(1), forKey: "k")
            }
            #expect(configured?.code == .invalidConfiguration)
            let created = try? FileManager.default.contentsOfDirectory(atPath: directory.path)
            #expect(created == [])
        }
    }

    @Test func invalidConfigurationFilesAreTypedErrors() throws {
        try withTemporaryDirectory { directory in
            let deep = String(repeating: "[", count: 100_000) + String(repeating: "]", count: 100_000)
            let files: [String] = [
                "", "{", "[]", "null", "{\"store\": 1}", "{\"store\": \"json:x\", \"cache\": true}", "{\"scheme\": 7}",
                "{\"scheme\": \"json\", \"location\": [], \"cache\": \"maybe\"}", "{\"scheme\": \"json\", \"options\": [1]}",
                "{\"scheme\": \"json\", \"options\": {\"a\": {}}}", "{\"colour\": \"red\"}", "{\"store\": " + deep + "}",
                String(repeating: "\u{FFFD}", count: 1000),
            ]
            for (index, text) in files.enumerated() {
                let path = directory.path("config-\(index).json")
                try Data(text.utf8).write(to: URL(fileURLWithPath: path))
                let error = #expect(throws: DefaultsError.self) { try StoreConfiguration(contentsOfFile: path) }
                #expect(error?.code == .invalidConfiguration, "\(text.prefix(60))")
            }
            let missing = #expect(throws: DefaultsError.self) { try StoreConfiguration(contentsOfFile: directory.path("missing.json")) }
            #expect(missing?.code == .invalidConfiguration)
        }
    }
}

/// Deeply nested values and files, built and released without recursion.
enum Deep {
    /// Arrays nested `depth` levels deep.
    static func array(depth: Int) -> DefaultsValue {
        var value = DefaultsValue.int(0)
        for _ in 0..<depth { value = .array([value]) }
        return value
    }

    /// Arrays and dictionaries alternating, `depth` levels deep.
    static func mixed(depth: Int) -> DefaultsValue {
        var value = DefaultsValue.string("bottom")
        for level in 0..<depth { value = level % 2 == 0 ? .array([value]) : .dictionary(["k": value]) }
        return value
    }

    /// Releases a deep value level by level, so that its release does not recurse.
    static func dismantle(_ value: inout DefaultsValue) {
        while true {
            switch value {
            case .array(let items) where items.count == 1: value = items[0]
            case .dictionary(let items) where items.count == 1: value = items.first!.value
            default: return
            }
        }
    }

    /// Files in the format of `scheme` whose one value nests `depth` levels deep.
    static func files(scheme: String, depth: Int) -> [[UInt8]] {
        switch scheme {
        case "json":
            return [Array(("{\"k\": " + String(repeating: "[", count: depth) + String(repeating: "]", count: depth) + "}").utf8)]
        case "userdefaults":
            let xml = "<?xml version=\"1.0\" encoding=\"UTF-8\"?><plist version=\"1.0\"><dict><key>k</key>"
                + String(repeating: "<array>", count: depth) + String(repeating: "</array>", count: depth) + "</dict></plist>"
            return [Array(xml.utf8), binaryPropertyList(depth: depth)]
        default:
            return []
        }
    }

    /// A binary property list `{k: [[[...]]]}`, `depth` arrays deep, each object referring to the next.
    static func binaryPropertyList(depth: Int) -> [UInt8] {
        func big(_ value: Int, _ size: Int) -> [UInt8] { (0..<size).reversed().map { UInt8(truncatingIfNeeded: value >> ($0 * 8)) } }
        var objects: [[UInt8]] = [[0xD1] + big(1, 4) + big(2, 4), [0x51, UInt8(ascii: "k")]]
        for index in 2..<(depth + 2) {
            objects.append(index == depth + 1 ? [0xA0] : [0xA1] + big(index + 1, 4))
        }
        var bytes = Array("bplist00".utf8)
        var offsets: [Int] = []
        for object in objects {
            offsets.append(bytes.count)
            bytes += object
        }
        let table = bytes.count
        for offset in offsets { bytes += big(offset, 4) }
        return bytes + [0, 0, 0, 0, 0, 0, 4, 4] + big(objects.count, 8) + big(0, 8) + big(table, 8)
    }
}
