// How long a change made by another process takes to reach an open store, per backend, and what
// an idle process holding open, observed stores costs in CPU time.
//
// Run: scripts/change-latency [--samples 200] [--interval-ms 20] [--idle-seconds 10] [--backends sqlite,lmdb,json,userdefaults]
//
// For each backend, a child process (this program with --child) writes `samples` keys one by one,
// `interval-ms` apart, and prints the monotonic times at which each write began and returned; this
// process holds the same store open (behind the cache, as configured by default) and notes when
// each key's `.external` event arrives. The latency is the difference from the write's return
// (CLOCK_MONOTONIC is one clock for every process on the machine); it can be negative when the
// event arrives while the writer is still flushing its commit to the disk. The table also gives
// the median from the write's start. Then it holds one observed store of every backend open and
// idle, and measures its own CPU time (getrusage) over `idle-seconds`.
import AnyDefaults
import Foundation
import Synchronization

#if canImport(Glibc)
import Glibc
#elseif canImport(Darwin)
import Darwin
#endif

func monotonicNanoseconds() -> UInt64 {
    var now = timespec()
    clock_gettime(CLOCK_MONOTONIC, &now)
    return UInt64(now.tv_sec) * 1_000_000_000 + UInt64(now.tv_nsec)
}

func fail(_ message: String) -> Never {
    FileHandle.standardError.write(Data("ChangeLatency: \(message)\n".utf8))
    exit(1)
}

func open(_ configuration: String, cached: Bool) throws -> any DefaultsProvider {
    var parsed = try StoreConfiguration(parsing: configuration)
    parsed.cache = cached
    return try ProviderRegistry.standard.makeProvider(parsed)
}

// MARK: The child: writes and says when each write returned

func child(_ configuration: String, samples: Int, interval: Int) throws {
    let store = try open(configuration, cached: false)
    for index in 0..<samples {
        let start = monotonicNanoseconds()
        try store.setValue(.int(Int64(index)), forKey: "latency.\(index)")
        print("\(index) \(start) \(monotonicNanoseconds())")
        fflush(nil)
        usleep(UInt32(interval * 1000))
    }
}

// MARK: The parent

struct Backend {
    var name: String
    var option: String
    /// A configuration string for a new store in `directory`.
    var configuration: (URL) -> String
    var cleanup: (String) -> Void = { _ in }
}

let backends: [Backend] = {
    var all = [
        Backend(name: "SQLite", option: "sqlite", configuration: { "sqlite:" + $0.appendingPathComponent("store.sqlite").path }),
        Backend(name: "LMDB", option: "lmdb", configuration: { "lmdb:" + $0.appendingPathComponent("store").path }),
        Backend(name: "JSON file", option: "json", configuration: { "json:" + $0.appendingPathComponent("store.json").path }),
    ]
    #if !canImport(Darwin)
    all.append(
        Backend(
            name: "UserDefaults (Linux)", option: "userdefaults",
            configuration: { _ in "userdefaults:anydefaults-latency-\(UUID().uuidString)" },
            cleanup: { try? UserDefaultsProvider.removeSuite(named: String($0.dropFirst("userdefaults:".count))) }))
    #endif
    return all
}()

struct Measurement {
    /// From the write's return to the event, in milliseconds, sorted.
    var latencies: [Double]
    /// From the write's start to the event, in milliseconds, sorted.
    var fromStart: [Double]
    var lost: Int
}

/// The `p` quantile (nearest rank) of sorted `values`.
func percentile(_ values: [Double], _ p: Double) -> Double {
    guard !values.isEmpty else { return .nan }
    return values[max(0, min(values.count - 1, Int((Double(values.count) * p).rounded(.up)) - 1))]
}

func measure(_ backend: Backend, samples: Int, interval: Int) throws -> Measurement {
    let directory = FileManager.default.temporaryDirectory.appendingPathComponent("anydefaults-latency-\(UUID().uuidString)")
    try FileManager.default.createDirectory(at: directory, withIntermediateDirectories: true)
    let configuration = backend.configuration(directory)
    defer {
        backend.cleanup(configuration)
        try? FileManager.default.removeItem(at: directory)
    }
    let store = try open(configuration, cached: true)
    let arrivals = Mutex<[String: UInt64]>([:])
    let observation = store.observe { event in
        guard event.origin == .external else { return }
        let now = monotonicNanoseconds()
        arrivals.withLock { $0[event.key] = $0[event.key] ?? now }
    }
    defer { observation.cancel() }

    let process = Process()
    process.executableURL = URL(fileURLWithPath: CommandLine.arguments[0]).resolvingSymlinksInPath()
    process.arguments = ["--child", configuration, "\(samples)", "\(interval)"]
    let output = Pipe()
    process.standardOutput = output
    try process.run()
    let lines = String(decoding: output.fileHandleForReading.readDataToEndOfFile(), as: UTF8.self).split(separator: "\n")
    process.waitUntilExit()
    guard process.terminationStatus == 0 else { fail("the child writing to \(backend.name) failed") }

    var written: [String: (start: UInt64, end: UInt64)] = [:]
    for line in lines {
        let fields = line.split(separator: " ")
        if fields.count == 3, let start = UInt64(fields[1]), let end = UInt64(fields[2]) {
            written["latency.\(fields[0])"] = (start, end)
        }
    }
    // The last events may still be on their way.
    let deadline = monotonicNanoseconds() + 2_000_000_000
    while arrivals.withLock({ $0.count }) < written.count, monotonicNanoseconds() < deadline { usleep(1000) }
    let arrived = arrivals.withLock { $0 }
    var latencies: [Double] = []
    var fromStart: [Double] = []
    for (key, time) in written {
        guard let arrival = arrived[key] else { continue }
        latencies.append(Double(Int64(bitPattern: arrival &- time.end)) / 1_000_000)
        fromStart.append(Double(Int64(bitPattern: arrival &- time.start)) / 1_000_000)
    }
    return Measurement(latencies: latencies.sorted(), fromStart: fromStart.sorted(), lost: written.count - latencies.count)
}

func cpuMilliseconds() -> Double {
    var usage = rusage()
    #if canImport(Glibc)
    getrusage(RUSAGE_SELF.rawValue, &usage)
    #else
    getrusage(RUSAGE_SELF, &usage)
    #endif
    func ms(_ time: timeval) -> Double { Double(time.tv_sec) * 1000 + Double(time.tv_usec) / 1000 }
    return ms(usage.ru_utime) + ms(usage.ru_stime)
}

/// CPU time of this process while it holds one observed store of each backend, idle.
func idleCost(_ selected: [Backend], seconds: Int) throws -> Double {
    let directory = FileManager.default.temporaryDirectory.appendingPathComponent("anydefaults-idle-\(UUID().uuidString)")
    try FileManager.default.createDirectory(at: directory, withIntermediateDirectories: true)
    var configurations: [(Backend, String)] = []
    defer {
        for (backend, configuration) in configurations { backend.cleanup(configuration) }
        try? FileManager.default.removeItem(at: directory)
    }
    var stores: [(any DefaultsProvider, DefaultsObservation)] = []
    for backend in selected {
        let location = directory.appendingPathComponent(backend.option)
        try FileManager.default.createDirectory(at: location, withIntermediateDirectories: true)
        let configuration = backend.configuration(location)
        configurations.append((backend, configuration))
        let store = try open(configuration, cached: true)
        try store.setValue(.int(1), forKey: "idle")
        stores.append((store, store.observe { _ in }))
    }
    sleep(1)  // let the writes' own wake-ups pass
    let start = cpuMilliseconds()
    sleep(UInt32(seconds))
    let used = cpuMilliseconds() - start
    withExtendedLifetime(stores) {}
    return used
}

// MARK: Main

var arguments = Array(CommandLine.arguments.dropFirst())
if arguments.first == "--child" {
    guard arguments.count == 4, let samples = Int(arguments[2]), let interval = Int(arguments[3]) else {
        fail("usage: --child <store> <samples> <interval-ms>")
    }
    do { try child(arguments[1], samples: samples, interval: interval) } catch { fail("\(error)") }
    exit(0)
}

var samples = 200
var interval = 20
var idleSeconds = 10
var selected = backends
while !arguments.isEmpty {
    let name = arguments.removeFirst()
    guard let value = arguments.first else { fail("\(name) needs a value") }
    arguments.removeFirst()
    switch name {
    case "--samples": samples = Int(value) ?? samples
    case "--interval-ms": interval = Int(value) ?? interval
    case "--idle-seconds": idleSeconds = Int(value) ?? idleSeconds
    case "--backends":
        let wanted = Set(value.split(separator: ",").map(String.init))
        selected = backends.filter { wanted.contains($0.option) }
    default: fail("unknown option \(name); options: --samples, --interval-ms, --idle-seconds, --backends")
    }
}

print("Changes from other processes: \(samples) writes per backend, \(interval) ms apart, from the write returning in the child to the event arriving here (cached store)")
print("Machine: \(ProcessInfo.processInfo.activeProcessorCount) cores, \(ProcessInfo.processInfo.operatingSystemVersionString)")
print("")
print("| Backend | p50 | p99 | max | p50 from the write's start | lost |")
print("| --- | --- | --- | --- | --- | --- |")
do {
    for backend in selected {
        let result = try measure(backend, samples: samples, interval: interval)
        func format(_ value: Double) -> String { String(format: "%.2f ms", value) }
        let columns = [
            percentile(result.latencies, 0.5), percentile(result.latencies, 0.99), result.latencies.last ?? .nan,
            percentile(result.fromStart, 0.5),
        ].map(format)
        print("| \(backend.name) | " + columns.joined(separator: " | ") + " | \(result.lost) |")
    }
    if idleSeconds > 0 {
        let used = try idleCost(selected, seconds: idleSeconds)
        print("")
        print("Idle: one observed, cached store of each backend held open for \(idleSeconds) s used \(String(format: "%.1f", used)) ms of CPU time (getrusage, user + system).")
    }
} catch {
    fail("\(error)")
}
