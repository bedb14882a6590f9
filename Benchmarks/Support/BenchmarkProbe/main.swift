// Runs one operation of the benchmarks in a loop, so that a profiler sees only it:
//   swift build -c release --product BenchmarkProbe
//   valgrind --tool=callgrind --toggle-collect='*measuredLoop*' .build/release/BenchmarkProbe SCENARIO [COUNT [KEYS]]
// Prints the mean time per operation (without a profiler, for a rough figure). Scenarios:
//   lmdb-read-raw | lmdb-read-provider          point reads of random keys in a store of KEYS keys
//   sqlite-read-raw | sqlite-read-provider      the same with SQLite
//   lmdb-open-provider | sqlite-open-provider   open a store of KEYS keys, read one key, close it
//   lmdb-write-nosync-raw | -rawmap | -provider | -observed | -cached   one MDB_NOSYNC write
//                                               (-rawmap: raw, with MDB_WRITEMAP)
//   lmdb-write-mapped-provider | -observed | -cached   the same with durability=mapped
//   sqlite-batch-raw | -provider | -observed | -cached          a batch of 10 at synchronous NORMAL
//   json-write-bare | json-write-provider      one write of a 1 KiB settings file (run under strace -c too)
//   json-write-nowatch | -otherstore            the provider not watching the file, and with another
//                                               watched store in the same directory
//   cached-read-int | typed-read-int | cached-read-string | typed-read-string
//                                               a cached read, raw or through Defaults
//   facade-write-int | facade-write-string      a typed write through Defaults (default cache) on
//                                               the memory store, every write a change (issue 24)
//   journal-write-int | journal-write-raw-int   a typed write through Defaults, and a write to the
//                                               provider alone, on LMDB behind a journal (journal=on)
//   typed-read-codable                          a Codable read through Defaults (decoded once)
//   tracked-read-int                            the typed read of ObservationBenchmarks ("Tracked
//                                               typed read Int"), on the store it is measured on
//   mmkv-table                                  the operations of the MMKV table of
//                                               Docs/Performance.md through Defaults (default cache)
//                                               on memory, LMDB no-sync and mapped, SQLite and JSON, and the
//                                               three with a journal (journal=on), 1000 keys;
//                                               COUNT reads, COUNT / 10 writes (COUNT / 1000 on JSON)
import AnyDefaultsCore
import AnyDefaultsJSONFile
import AnyDefaultsLMDB
import AnyDefaultsMemory
import AnyDefaultsSQLite
import BenchmarkData
import Foundation

extension DefaultsKeys {
    static let benchCount = DefaultsKey<Int>("count", default: 0)
    static let benchName = DefaultsKey<String>("name", default: "")
    static let benchLayout = DefaultsKey<SampleLayout>(
        "layout", default: SampleLayout(columns: 0, sidebar: false, title: "", widths: []))
}

@inline(never) func keep<T>(_ value: T) { withExtendedLifetime(value) {} }

/// The loop a profiler collects (`--toggle-collect='*measuredLoop*'`).
@inline(never) func measuredLoop(_ count: Int, _ body: (Int) throws -> Void) rethrows {
    for index in 0..<count { try body(index) }
}

/// Runs `body` `count` times in ``measuredLoop(_:_:)`` and prints the mean time.
func measure(_ name: String, _ count: Int, _ body: (Int) throws -> Void) rethrows {
    let time = try ContinuousClock().measure { try measuredLoop(count, body) }
    print("\(name): \(time / count) per operation")
}

let arguments = CommandLine.arguments
guard arguments.count >= 2 else {
    print("usage: BenchmarkProbe SCENARIO [COUNT [KEYS]]")
    exit(2)
}
let scenario = arguments[1]
let count = arguments.count > 2 ? Int(arguments[2]) ?? 10_000 : 10_000
let keys = arguments.count > 3 ? Int(arguments[3]) ?? 1_000 : 1_000
let directory = FileManager.default.temporaryDirectory.appendingPathComponent("anydefaults-probe-\(UUID().uuidString)")
try FileManager.default.createDirectory(at: directory, withIntermediateDirectories: true)
defer { try? FileManager.default.removeItem(at: directory) }

/// Prints the size of the files under `directory`, to relate a store's size to the caches.
func printSize(of directory: URL, keys: Int) {
    let files = FileManager.default.enumerator(at: directory, includingPropertiesForKeys: [.fileSizeKey])
    var bytes = 0
    while let file = files?.nextObject() as? URL {
        bytes += (try? file.resourceValues(forKeys: [.fileSizeKey]).fileSize) ?? 0
    }
    print("files of the store of \(keys) keys: \(bytes / 1024) KiB")
}

/// A variant of the scenario: the part after its last "-".
let variant = scenario.split(separator: "-").last.map(String.init) ?? ""

func store<P: DefaultsProvider>(_ provider: P) -> (any DefaultsProvider, DefaultsObservation?) {
    switch variant {
    case "cached": (provider.cached(), nil)
    case "observed": (provider, provider.observe { keep($0) })
    default: (provider, nil)
    }
}

/// The rows of the MMKV table, in nanoseconds per operation, for each store.
func mmkvTable() throws {
    let keyCount = 1000
    let intKeys = (0..<keyCount).map { DefaultsKey<Int>("int\($0)", default: 0) }
    let stringKeys = (0..<keyCount).map { DefaultsKey<String>("string\($0)", default: "") }
    let strings = [String(repeating: "a", count: 32), String(repeating: "b", count: 32)]
    let stores: [(String, () throws -> any DefaultsProvider)] = [
        ("memory:", { MemoryProvider() }),
        ("lmdb:?durability=nosync", { try LMDBProvider(path: directory.appendingPathComponent("store.lmdb").path, options: .init(durability: .noSync)) }),
        ("lmdb:?durability=mapped", { try LMDBProvider(path: directory.appendingPathComponent("mapped.lmdb").path, options: .init(durability: .mapped)) }),
        ("sqlite:", { try SQLiteProvider(path: directory.appendingPathComponent("store.sqlite").path) }),
        ("json:", { try JSONFileProvider(path: directory.appendingPathComponent("store.json").path) }),
        // A journal in front (journal=on): writes acknowledged in a memory-mapped journal.
        ("lmdb:?journal=on", { try LMDBProvider(path: directory.appendingPathComponent("journaled.lmdb").path).journaled() }),
        ("sqlite:?journal=on", { try SQLiteProvider(path: directory.appendingPathComponent("journaled.sqlite").path).journaled() }),
        ("json:?journal=on", { try JSONFileProvider(path: directory.appendingPathComponent("journaled.json").path).journaled() }),
    ]
    func nanoseconds(_ operations: Int, _ body: (Int) -> Void) -> Int {
        let time = ContinuousClock().measure { measuredLoop(operations, body) }
        let (seconds, attoseconds) = time.components
        return Int((Double(seconds) * 1e9 + Double(attoseconds) / 1e9) / Double(operations))
    }
    print("| store | read Int | read 32-byte String | write changed Int | write changed String | write unchanged |")
    print("| --- | --- | --- | --- | --- | --- |")
    for (name, open) in stores {
        let provider = try open()
        try provider.apply((0..<keyCount).flatMap { [DefaultsChange.set("int\($0)", .int(0)), .set("string\($0)", .string(strings[0]))] })
        let defaults = Defaults(provider)
        for index in 0..<keyCount { keep(defaults[intKeys[index]]); keep(defaults[stringKeys[index]]) }
        let writes = max(1, name == "json:" ? count / 1000 : count / 10)
        // Keys taken from an array without counting references, as an application reads its
        // keys (static constants, which a read does not retain): taking a key out of an array
        // retains and releases it, two atomic operations a real read does not make.
        let intRead = intKeys.map { Unmanaged.passUnretained($0) }
        let stringRead = stringKeys.map { Unmanaged.passUnretained($0) }
        let readInt = nanoseconds(count) { index in intRead[index % keyCount]._withUnsafeGuaranteedRef { keep(defaults[$0]) } }
        let readString = nanoseconds(count) { index in stringRead[index % keyCount]._withUnsafeGuaranteedRef { keep(defaults[$0]) } }
        // Every write a change: the value alternates between two, a round of keys at a time.
        let writeInt = nanoseconds(writes) { index in
            intRead[index % keyCount]._withUnsafeGuaranteedRef { defaults[$0] = 1 - (index / keyCount) % 2 }
        }
        let writeString = nanoseconds(writes) { index in
            stringRead[index % keyCount]._withUnsafeGuaranteedRef { defaults[$0] = strings[1 - (index / keyCount) % 2] }
        }
        for index in 0..<keyCount { defaults[intKeys[index]] = 5 }
        let unchanged = nanoseconds(count) { index in intRead[index % keyCount]._withUnsafeGuaranteedRef { defaults[$0] = 5 } }
        print("| `\(name)` | \(readInt) | \(readString) | \(writeInt) | \(writeString) | \(unchanged) |")
    }
}

func cachedReads<P: DefaultsProvider>(_ upstream: P) throws {
    try upstream.apply(facadeSeed().map { .set($0.key, $0.value) })
    let cache = upstream.cached()
    let defaults = Defaults(cache)
    _ = try cache.value(forKey: "name")
    _ = try cache.value(forKey: "count")
    switch scenario {
    case "typed-read-int": measure(scenario, count) { _ in keep(defaults[.benchCount]) }
    case "typed-read-string": measure(scenario, count) { _ in keep(defaults[.benchName]) }
    case "cached-read-int": try measure(scenario, count) { _ in keep(try cache.value(forKey: "count")) }
    default: try measure(scenario, count) { _ in keep(try cache.value(forKey: "name")) }
    }
}

switch scenario {
case "lmdb-read-raw", "lmdb-read-provider", "sqlite-read-raw", "sqlite-read-provider":
    let sample = ScaleKeys.sample(of: keys)
    if scenario == "lmdb-read-raw" {
        let raw = try RawLMDBStore(path: directory.appendingPathComponent("raw").path, noSync: true)
        raw.write((0..<keys).lazy.map { (ScaleKeys.name($0), Int64($0)) })
        printSize(of: directory, keys: keys)
        measure(scenario, count) { keep(raw.read(sample[$0 % sample.count])) }
    } else if scenario == "lmdb-read-provider" {
        let provider = try LMDBProvider(path: directory.appendingPathComponent("provider").path)
        try provider.apply(ScaleKeys.changes(count: keys))
        printSize(of: directory, keys: keys)
        try measure(scenario, count) { keep(try provider.value(forKey: sample[$0 % sample.count])) }
    } else {
        let path = directory.appendingPathComponent("store.sqlite").path
        let provider = try SQLiteProvider(path: path)
        try provider.apply(ScaleKeys.changes(count: keys))
        printSize(of: directory, keys: keys)
        if scenario == "sqlite-read-raw" {
            let raw = try RawSQLite(path: path, full: false)
            measure(scenario, count) { keep(raw.read(key: sample[$0 % sample.count])) }
        } else {
            try measure(scenario, count) { keep(try provider.value(forKey: sample[$0 % sample.count])) }
        }
    }
case "sqlite-open-provider":
    let path = directory.appendingPathComponent("store.sqlite").path
    do {
        let provider = try SQLiteProvider(path: path)
        try provider.apply(ScaleKeys.changes(count: keys))
        provider.close()
    }
    let sample = ScaleKeys.sample(of: keys)
    try measure(scenario, count) {
        let provider = try SQLiteProvider(path: path)
        keep(try provider.value(forKey: sample[$0 % sample.count]))
        provider.close()
    }
case "lmdb-open-provider":
    let path = directory.appendingPathComponent("store").path
    do {
        let provider = try LMDBProvider(path: path)
        try provider.apply(ScaleKeys.changes(count: keys))
        provider.close()
    }
    printSize(of: directory, keys: keys)
    let sample = ScaleKeys.sample(of: keys)
    try measure(scenario, count) {
        let provider = try LMDBProvider(path: path)
        keep(try provider.value(forKey: sample[$0 % sample.count]))
        provider.close()
    }
case let name where name.hasPrefix("lmdb-write-nosync-") || name.hasPrefix("lmdb-write-mapped-"):
    let path = directory.appendingPathComponent("store").path
    if variant == "raw" || variant == "rawmap" {
        let raw = try RawLMDBStore(path: path, noSync: true, writeMap: variant == "rawmap")
        measure(scenario, count) { raw.write(key: "k", value: Int64($0)) }
    } else {
        let durability: LMDBProvider.Options.Durability = name.hasPrefix("lmdb-write-mapped-") ? .mapped : .noSync
        let (provider, observation) = store(try LMDBProvider(path: path, options: .init(durability: durability)))
        try measure(scenario, count) { try provider.setValue(.int(Int64($0)), forKey: "k") }
        keep(observation)
    }
case let name where name.hasPrefix("sqlite-batch-"):
    let path = directory.appendingPathComponent("store.sqlite").path
    let keys = (0..<10).map { "batch.key.\($0)" }
    let seeding = try SQLiteProvider(path: path)
    try seeding.apply(keys.map { .set($0, .int(-1)) })
    seeding.close()
    if variant == "raw" {
        let raw = try RawSQLite(path: path, full: false)
        let rawKeys: [StaticString] = [
            "batch.key.0", "batch.key.1", "batch.key.2", "batch.key.3", "batch.key.4",
            "batch.key.5", "batch.key.6", "batch.key.7", "batch.key.8", "batch.key.9",
        ]
        measure(scenario, count) { raw.batch(keys: rawKeys, value: Int64($0)) }
    } else {
        let (provider, observation) = store(try SQLiteProvider(path: path))
        try measure(scenario, count) { index in try provider.apply(keys.map { .set($0, .int(Int64(index))) }) }
        keep(observation)
    }
case "json-write-bare", "json-write-provider", "json-write-nowatch", "json-write-otherstore":
    let path = directory.appendingPathComponent("settings.json").path
    let provider = try JSONFileProvider(path: path, options: .init(watchesExternalChanges: variant == "provider" || variant == "bare"))
    // The file monitor is the backends' own machinery (package access): another watched store in
    // the directory is how a program gets a second monitor there.
    let extra: JSONFileProvider? = variant == "otherstore" ? try JSONFileProvider(path: path + ".other") : nil
    defer { keep(extra) }
    try provider.apply((0..<20).map { .set("settings.key\($0)", .string("a value of a typical length \($0)")) })
    if variant == "bare" {
        var contents: [[UInt8]] = []
        for state in 0..<2 {
            try provider.setValue(.int(Int64(state)), forKey: "counter")
            contents.append(Array(try Data(contentsOf: URL(fileURLWithPath: path))))
        }
        measure(scenario, count) { keep(bareAtomicWrite(contents[$0 & 1], to: path + ".bare", directory: directory.path)) }
    } else {
        try measure(scenario, count) { try provider.setValue(.int(Int64($0 & 1)), forKey: "counter") }
    }
case "facade-write-int":
    let defaults = Defaults(MemoryProvider())
    measure(scenario, count) { defaults[.benchCount] = $0 & 1 }
case "facade-write-string":
    let defaults = Defaults(MemoryProvider())
    let names = [String(repeating: "a", count: 32), String(repeating: "b", count: 32)]
    measure(scenario, count) { defaults[.benchName] = names[$0 & 1] }
case "journal-write-int", "journal-write-raw-int":
    // A write through Defaults, and one to the provider alone, on LMDB behind a journal.
    let provider = try LMDBProvider(path: directory.appendingPathComponent("journaled").path).journaled()
    let defaults = Defaults(provider)
    if scenario == "journal-write-int" {
        measure(scenario, count) { defaults[.benchCount] = $0 & 1 }
    } else {
        try measure(scenario, count) { try provider.setValue(.int(Int64($0 & 1)), forKey: "count") }
    }
case "typed-read-codable":
    let defaults = Defaults(MemoryProvider(facadeSeed()))
    measure(scenario, count) { _ in keep(defaults[.benchLayout]) }
case "tracked-read-int":
    let defaults = Defaults(MemoryProvider(["count": .int(42), "model.count": .int(42)]).cached())
    measure(scenario, count) { _ in keep(defaults[.benchCount]) }
case "cached-read-int", "typed-read-int", "cached-read-string", "typed-read-string":
    try cachedReads(MemoryProvider())
case "mmkv-table":
    try mmkvTable()
default:
    print("unknown scenario \(scenario)")
    exit(2)
}
