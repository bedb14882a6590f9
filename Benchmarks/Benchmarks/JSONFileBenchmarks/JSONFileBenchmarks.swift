import AnyDefaultsCore
import AnyDefaultsJSONFile
import Benchmark
import Foundation
import Synchronization

#if canImport(Glibc)
import Glibc
#elseif canImport(Darwin)
import Darwin
#endif

// JSONFileProvider against its raw baselines, side by side in one run:
// - a write through the provider vs writing the same bytes with a bare atomic file write
//   (temporary file, fsync, rename, fsync of the directory);
// - a read (served from memory) vs a bare Mutex<[String: DefaultsValue]> lookup.

/// The bare atomic write the provider is measured against: what any careful program does.
func bareAtomicWrite(_ bytes: [UInt8], to path: String, directory: String) {
    let temporary = path + ".tmp"
    let descriptor = open(temporary, O_WRONLY | O_CREAT | O_TRUNC | O_CLOEXEC, 0o600)
    guard descriptor >= 0 else { fatalError("open: \(errno)") }
    let written = bytes.withUnsafeBytes { write(descriptor, $0.baseAddress, $0.count) }
    guard written == bytes.count, fsync(descriptor) == 0, close(descriptor) == 0, rename(temporary, path) == 0 else {
        fatalError("write failed: \(errno)")
    }
    let directoryDescriptor = open(directory, O_RDONLY | O_DIRECTORY | O_CLOEXEC)
    guard directoryDescriptor >= 0, fsync(directoryDescriptor) == 0 else { fatalError("directory sync: \(errno)") }
    close(directoryDescriptor)
}

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

let benchmarks: @Sendable () -> Void = {
    Benchmark.defaultConfiguration = .init(metrics: [.wallClock, .throughput, .mallocCountTotal], maxDuration: .seconds(3))

    // One fixed directory: package-benchmark starts this executable several times.
    let directory = FileManager.default.temporaryDirectory
        .appendingPathComponent("anydefaults-jsonfile-benchmark", isDirectory: true).path
    try? FileManager.default.removeItem(atPath: directory)
    try? FileManager.default.createDirectory(atPath: directory, withIntermediateDirectories: true)
    Benchmark.teardown = { try? FileManager.default.removeItem(atPath: directory) }

    // The provider, and the two file contents it alternates between, captured for the baseline.
    let path = directory + "/settings.json"
    let provider: JSONFileProvider
    do {
        provider = try JSONFileProvider(path: path)
        try provider.apply(sampleValues().map { .set($0.key, $0.value) })
    } catch {
        fatalError("cannot open the store: \(error)")
    }
    var contents: [[UInt8]] = []
    for counter in 0..<2 {
        try? provider.setValue(.int(Int64(counter)), forKey: "counter")
        contents.append(Array((try? Data(contentsOf: URL(fileURLWithPath: path))) ?? Data()))
    }
    let sameBytes = contents

    // Every write must change the value (an unchanged value is not written at all), so each side
    // alternates between two contents, counting across the benchmark's runs.
    let counter = Atomic<Int>(0)
    func next() -> Int { counter.wrappingAdd(1, ordering: .relaxed).newValue & 1 }

    Benchmark("Baseline: atomic write of the same bytes") { benchmark in
        let barePath = directory + "/bare.json"
        for _ in benchmark.scaledIterations {
            bareAtomicWrite(sameBytes[next()], to: barePath, directory: directory)
        }
    }

    Benchmark("JSONFileProvider write") { benchmark in
        for _ in benchmark.scaledIterations {
            try provider.setValue(.int(Int64(next())), forKey: "counter")
        }
    }

    // The same comparison with both writes taken back to back, alternating which goes first:
    // the disk's sync latency swings by an order of magnitude with what else runs on the machine,
    // which separate benchmarks (run one after the other) cannot cancel out, and pairing does.
    // Records each pair's time ratio ×1000; the ratio table reads its median ("paired" goals).
    let pairedRatio = BenchmarkMetric.custom("paired ratio ×1000", polarity: .prefersSmaller, useScalingFactor: false)
    Benchmark("JSONFileProvider write vs bare write, paired", configuration: .init(metrics: [.throughput, pairedRatio])) { benchmark in
        let barePath = directory + "/bare.json"
        for _ in benchmark.scaledIterations {
            let which = next()
            let bare = {
                let start = ContinuousClock.now
                bareAtomicWrite(sameBytes[which], to: barePath, directory: directory)
                return ContinuousClock.now - start
            }
            let viaProvider = {
                let start = ContinuousClock.now
                try provider.setValue(.int(Int64(which)), forKey: "counter")
                return ContinuousClock.now - start
            }
            let (bareTime, providerTime) = which == 0 ? (bare(), try viaProvider()) : (try viaProvider(), bare())
            benchmark.measurement(pairedRatio, Int((providerTime / bareTime * 1000).rounded()))
        }
    }

    let mutex = Mutex<[String: DefaultsValue]>(sampleValues())
    Benchmark("Baseline: Mutex<[String: DefaultsValue]> read", configuration: .init(scalingFactor: .kilo)) { benchmark in
        for _ in benchmark.scaledIterations {
            blackHole(mutex.withLock { $0["ui.theme"] })
        }
    }

    Benchmark("JSONFileProvider read", configuration: .init(scalingFactor: .kilo)) { benchmark in
        for _ in benchmark.scaledIterations {
            blackHole(try provider.value(forKey: "ui.theme"))
        }
    }
}
