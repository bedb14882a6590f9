import AnyDefaults
import AnyDefaultsPlatform
import Foundation

/// The names of the four keys one writer thread of one stress process sets in every batch.
func stressKeys(process id: Int, thread: Int) -> [String] {
    ["a", "b", "c", "d"].map { "p\(id)-t\(thread)-\($0)" }
}

/// A small deterministic generator (SplitMix64).
struct StressRandom {
    var state: UInt64
    mutating func next(_ bound: Int) -> Int {
        state &+= 0x9E37_79B9_7F4A_7C15
        var z = state
        z = (z ^ (z >> 30)) &* 0xBF58_476D_1CE4_E5B9
        z = (z ^ (z >> 27)) &* 0x94D0_49BB_1331_11EB
        return Int((z ^ (z >> 31)) % UInt64(bound))
    }
}

/// Runs the stress workload on the store `text` names until the process is killed: every commit
/// of every process wakes this one's watcher (it observes), and an LMDB map opened at 64 KiB
/// (`mapsize=64KiB`) grows, in this process and the others, while they read, write and watch.
///
/// - Two writer threads each commit batches that set their four keys to one generation (a value
///   of 0–4 KiB, one in eight up to 256 KiB), printing `ack <thread> <generation>` after each.
/// - One thread sets a blob that doubles from 64 KiB to 4 MiB, then removes it.
/// - One thread reads other processes' keys and, now and then, every value.
///
/// Any error is printed as `error <code>: <description>` and ends the process with status 1.
func stress(store text: String, id: Int, firstGeneration: Int64) throws(DefaultsError) -> Never {
    let store = try provider(text)
    // Observed: the process watches the store, so that other processes' commits wake it.
    let observation = store.observe { _ in }
    say("ready")
    let fatal: @Sendable (DefaultsError) -> Never = { error in
        say("error \(error.code): \(error)")
        // A full map: which readers pinned the pages (for the next person to read the failure).
        if error.code == .storageFull, let directory = error.path { say("lmdb: \(lmdbReaderReport(directory))") }
        exit(1)
    }
    for thread in 0..<2 {
        Thread {
            var random = StressRandom(state: UInt64(id) << 40 ^ UInt64(thread) << 32 ^ UInt64(bitPattern: firstGeneration))
            var generation = firstGeneration
            while true {
                let changes: [DefaultsChange] = stressKeys(process: id, thread: thread).map { key in
                    let size = random.next(8) == 0 ? random.next(256 << 10) : random.next(4 << 10)
                    let padding = Data(repeating: UInt8(truncatingIfNeeded: generation), count: size)
                    return .set(key, .dictionary(["generation": .int(generation), "padding": .data(padding)]))
                }
                do throws(DefaultsError) {
                    try store.apply(changes)
                } catch {
                    fatal(error)
                }
                say("ack \(thread) \(generation)")
                generation += 1
            }
        }.start()
    }
    Thread {
        var random = StressRandom(state: UInt64(id) &* 7919)
        var round = 0
        while true {
            round += 1
            do throws(DefaultsError) {
                let other = random.next(4)
                _ = try store.value(forKey: "p\(other)-t\(random.next(2))-a")
                if round % 64 == 0 { _ = try store.allValues() }
            } catch {
                fatal(error)
            }
        }
    }.start()
    var step = 0
    while true {
        do throws(DefaultsError) {
            if step % 7 == 6 {
                try store.removeValue(forKey: "p\(id)-blob")
            } else {
                try store.setValue(.data(Data(repeating: UInt8(step & 0xFF), count: (64 << 10) << (step % 7))), forKey: "p\(id)-blob")
            }
        } catch {
            fatal(error)
        }
        step += 1
        withExtendedLifetime(observation) {}
    }
}
