// How long a change committed by one client takes to reach another client's observers, over a
// PostgreSQL server: p50 and p99 from the writer's call returning (its commit acknowledged) and
// from the call starting, and how many changes never arrived. Two connections of one process
// (different application names, so different sessions and replicas), as two machines would be.
//   PostgreSQLLatency <postgres: store string> [samples] [interval-ms]
// Run: scripts/postgres-benchmarks (it starts a throwaway cluster).
import AnyDefaultsCore
import AnyDefaultsPostgreSQL
import Foundation
import Synchronization

let arguments = CommandLine.arguments
guard arguments.count >= 2 else {
    FileHandle.standardError.write(Data("usage: PostgreSQLLatency <postgres: store string> [samples] [interval-ms]\n".utf8))
    exit(64)
}
let samples = arguments.count > 2 ? Int(arguments[2]) ?? 1000 : 1000
let interval = arguments.count > 3 ? Double(arguments[3]) ?? 5 : 5

var options = try PostgreSQLProvider.Options(StoreConfiguration(parsing: arguments[1]))
options.namespace = "latency-\(UUID().uuidString)"
options.applicationName = "latency-writer"
let writer = try PostgreSQLProvider(options: options)
options.applicationName = "latency-reader"
let reader = try PostgreSQLProvider(options: options)

let clock = ContinuousClock()
let arrivals = Mutex<[Int64: ContinuousClock.Instant]>([:])
let observation = reader.observe { event in
    guard event.origin == .external, case .int(let value)? = event.newValue else { return }
    let now = clock.now
    arrivals.withLock { $0[value] = now }
}

var fromReturn: [Duration] = []
var fromStart: [Duration] = []
var lost = 0
for sample in 1...samples {
    let start = clock.now
    try writer.setValue(.int(Int64(sample)), forKey: "tick")
    let returned = clock.now
    let deadline = returned + .seconds(2)
    var arrival: ContinuousClock.Instant?
    while clock.now < deadline {
        if let time = arrivals.withLock({ $0[Int64(sample)] }) {
            arrival = time
            break
        }
        usleep(20)
    }
    if let arrival {
        fromReturn.append(arrival - returned)
        fromStart.append(arrival - start)
    } else {
        lost += 1
    }
    Thread.sleep(forTimeInterval: interval / 1000)
}
observation.cancel()

func percentile(_ values: [Duration], _ p: Double) -> String {
    guard !values.isEmpty else { return "-" }
    let sorted = values.sorted()
    let value = sorted[min(sorted.count - 1, Int((Double(sorted.count) * p).rounded(.up)) - 1)]
    let microseconds = Double(value.components.seconds) * 1e6 + Double(value.components.attoseconds) / 1e12
    return String(format: "%.0f µs", microseconds)
}
print("| samples | from the commit's return: p50 | p99 | from the write's start: p50 | p99 | lost |")
print("| --- | --- | --- | --- | --- | --- |")
print("| \(samples) | \(percentile(fromReturn, 0.5)) | \(percentile(fromReturn, 0.99)) | \(percentile(fromStart, 0.5)) | \(percentile(fromStart, 0.99)) | \(lost) |")
writer.close()
reader.close()
