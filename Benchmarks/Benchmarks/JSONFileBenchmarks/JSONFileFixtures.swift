import AnyDefaultsCore
import AnyDefaultsJSONFile
import BenchmarkData
import BenchmarkSupport
import Foundation

/// A settings store of a realistic size and mix (about 1 KiB of JSON).
func sampleValues() -> [String: DefaultsValue] {
    var values: [String: DefaultsValue] = [
        "ui.theme": .string("dark"), "ui.scale": .double(1.25), "onboarded": .bool(true),
        "lastOpened": .date(Date(timeIntervalSinceReferenceDate: 736_257_600)),
        "token": .data(Data(repeating: 7, count: 32)),
        "recent": .array((0..<5).map { .string("/Users/someone/Documents/file\($0).txt") }),
        "window": .dictionary(["x": .int(10), "y": .int(20), "width": .int(1280), "height": .int(800)]),
    ]
    for index in 0..<15 { values["feature.flag\(index)"] = .bool(index.isMultiple(of: 2)) }
    return values
}

/// The stores the benchmarks write, each on a file of its own in one directory.
final class JSONFileFixtures: Sendable {
    /// One value changed with `setValue`.
    let single: PairedWrite
    /// The same through a cache.
    let cached: PairedWrite
    /// Ten values changed with one `apply`.
    let batch: PairedWrite

    init(directory: URL) throws {
        func store(_ name: String) throws -> JSONFileProvider {
            let provider = try JSONFileProvider(path: directory.appendingPathComponent(name).path)
            try provider.apply(sampleValues().map { .set($0.key, $0.value) })
            return provider
        }
        let plain = try store("single.json")
        single = try PairedWrite(directory: directory, name: "single") { try plain.setValue(.int(Int64($0)), forKey: "counter") }
        let cache = try store("cached.json").cached()
        cached = try PairedWrite(directory: directory, name: "cached") { try cache.setValue(.int(Int64($0)), forKey: "counter") }
        let batched = try store("batch.json")
        let keys = (0..<10).map { "batch.key\($0)" }
        batch = try PairedWrite(directory: directory, name: "batch") { which in
            try batched.apply(keys.map { .set($0, .int(Int64(which))) })
        }
        provider = plain
    }

    /// The provider of ``single``, for reads.
    let provider: JSONFileProvider
}

/// A write through a provider that alternates between two states (every write must change the
/// value: an unchanged value is not written at all), and the file's bytes in each state, which
/// the baseline writes, alternating too, with a bare atomic write.
final class PairedWrite: Sendable {
    private let write: @Sendable (Int) throws -> Void
    private let contents: [[UInt8]]
    private let barePath: String
    private let directory: String
    private let providerTurns = Turns()
    private let bareTurns = Turns()

    init(directory: URL, name: String, write: @escaping @Sendable (Int) throws -> Void) throws {
        self.write = write
        self.directory = directory.path
        barePath = directory.appendingPathComponent(name + "-bare.json").path
        let path = directory.appendingPathComponent(name + ".json").path
        var contents: [[UInt8]] = []
        for state in 0..<2 {
            try write(state)
            contents.append(Array(try Data(contentsOf: URL(fileURLWithPath: path))))
        }
        self.contents = contents
    }

    /// Writes the next state through the provider, `count` times.
    func writeThrough(_ count: Int = 1) throws {
        for _ in 0..<count { try write(providerTurns.next() & 1) }
    }

    struct BareWriteFailed: Error {}

    /// Writes the bytes of the next state with a bare atomic write, `count` times.
    func writeBare(_ count: Int = 1) throws {
        for _ in 0..<count {
            guard bareAtomicWrite(contents[bareTurns.next() & 1], to: barePath, directory: directory) else { throw BareWriteFailed() }
        }
    }
}
