import Benchmark
import Foundation

#if canImport(Glibc)
import Glibc
#elseif canImport(Darwin)
import Darwin
#endif

/// The memory this process holds in RAM (its resident set), for measuring what a data structure
/// costs: the difference before and after building it.
public enum ResidentMemory {
    /// The resident set size in bytes, after handing memory the allocator holds free back to the
    /// system (so that what was freed does not count), or `nil` where it cannot be read.
    public static func bytes() -> Int? {
        #if os(Linux)
        _ = trim?(0)
        // /proc/self/statm: total program size, then resident pages.
        guard let statm = try? String(contentsOfFile: "/proc/self/statm", encoding: .ascii),
            let pages = statm.split(separator: " ").dropFirst().first.flatMap({ Int($0) })
        else { return nil }
        return pages * Int(sysconf(Int32(_SC_PAGESIZE)))
        #elseif canImport(Darwin)
        var info = mach_task_basic_info()
        var count = mach_msg_type_number_t(MemoryLayout<mach_task_basic_info>.size / MemoryLayout<natural_t>.size)
        let result = withUnsafeMutablePointer(to: &info) { pointer in
            pointer.withMemoryRebound(to: integer_t.self, capacity: Int(count)) {
                task_info(mach_task_self_, task_flavor_t(MACH_TASK_BASIC_INFO), $0, &count)
            }
        }
        return result == KERN_SUCCESS ? Int(info.resident_size) : nil
        #else
        return nil
        #endif
    }

    #if os(Linux)
    /// glibc's `malloc_trim`, which returns the free memory of every arena to the system; looked
    /// up at run time, as Swift's Glibc module does not export `malloc.h`.
    private static let trim: (@convention(c) (Int) -> Int32)? = {
        guard let symbol = dlsym(UnsafeMutableRawPointer(bitPattern: 0), "malloc_trim") else { return nil }
        return unsafeBitCast(symbol, to: (@convention(c) (Int) -> Int32).self)
    }()
    #endif

    /// The metric benchmarks record the growth of the resident set in, in KiB.
    public static let metric = BenchmarkMetric.custom("resident KiB", polarity: .prefersSmaller, useScalingFactor: false)

    /// Records in `benchmark` how much the resident set grows while `build` runs and its result
    /// is alive.
    public static func measure<Result>(_ benchmark: Benchmark, _ build: () throws -> Result) rethrows {
        let before = bytes() ?? 0
        let result = try build()
        let after = bytes() ?? 0
        benchmark.measurement(metric, max(0, after - before) / 1024)
        withExtendedLifetime(result) {}
    }
}

/// The metrics every benchmark records: time, throughput and heap allocations.
public let standardMetrics: [BenchmarkMetric] = [.wallClock, .throughput, .mallocCountTotal]
