// A separate process for the reliability tests (Tests/ReliabilityTests, scripts/crash-test).
// Every command opens its store through ProviderRegistry.standard, without the cache.
//
//   ReliabilityTestChild write <store> <seed> <first-generation>
//       Runs the crash workload from <first-generation> on, forever, printing "ack <generation>"
//       (flushed) after each write returns. Meant to be killed.
//   ReliabilityTestChild check <store> <seed> <state-file> <acknowledged>
//       Opens the store after a kill and checks it against the workload: every key holds its last
//       acknowledged value or the one of the write in flight, never a torn or older one, and the
//       write in flight is all or nothing on stores that claim atomic batches. Records what it
//       found in <state-file> for the next check. Prints "ok ..." or the failures (exit 1).
//   ReliabilityTestChild hammer <store> <id> <threads> <count> [<go-file>]
//       Writes distinct keys and one shared key from <threads> threads at once, while a reader
//       checks that batches are never seen half applied. Prints "ok" or the failures (exit 1).
//   ReliabilityTestChild touch <store>
//       Writes a few keys under umask 0, so that the store creates its files with exactly the modes
//       it asks for (and has some pages of data to damage).
//   ReliabilityTestChild keep-writing <store> <id> <slots> <stop-file>
//       Writes n = 1, 2, ... until <stop-file> exists, each to a key of slot n % <slots>, and
//       prints "ack <key> <n>" after each write returns, then "done". A slot's key is written a
//       few times and then retired for a new one (w<id>.s<slot>.g<generation>), as a user sets a
//       setting now and then: the last write of each key is final, so the last acknowledged n of
//       each key is the value it must hold (somewhere).
//   ReliabilityTestChild standard-write <key> <value>
//       Writes the string <value> under <key> through Defaults.standard, as an app does (the
//       store `anydefaults --app ReliabilityTestChild` must open), and prints "ok".
//   ReliabilityTestChild writes <store> <count>
//       Opens the store, writes <count> different values to one key (each its own commit), prints
//       "ok"; the durability tests count the syncs of runs of 1 and of more writes.
//   ReliabilityTestChild empties <store> <count>
//       Like writes, but each time sets the only key and removes it again, emptying the store
//       (a UserDefaults suite file is then removed): two commits per round.
//   ReliabilityTestChild writes-after <first-store> <store> <count>
//       Opens <first-store> and writes once, then opens <store> (the same LMDB environment with
//       another durability) and writes <count> times through it: a provider's own durability must
//       hold on a shared environment.
//   ReliabilityTestChild read <store>
//       Opens the store and reads every key: prints "read <count>" or "error <code>" (exit 0);
//       anything else (a crash, another error) is a failure.
import AnyDefaults
import Foundation
import Synchronization

#if canImport(Glibc)
import Glibc
#elseif canImport(Darwin)
import Darwin
#endif

func fail(_ message: String, status: Int32 = 2) -> Never {
    FileHandle.standardError.write(Data((message + "\n").utf8))
    exit(status)
}

/// Writes a line to standard output at once, unbuffered: what the parent reads after a kill must
/// be everything printed before it.
func say(_ line: String) {
    let bytes = Array((line + "\n").utf8)
    var written = 0
    while written < bytes.count {
        let count = bytes.withUnsafeBytes { write(1, $0.baseAddress! + written, bytes.count - written) }
        if count < 0 {
            if errno == EINTR { continue }
            exit(4)
        }
        written += count
    }
}

func open(_ store: String) -> any DefaultsProvider {
    let text = store + (store.contains("?") ? "&" : "?") + "cache=off"
    do {
        return try ProviderRegistry.standard.makeProvider(text)
    } catch {
        fail("open failed: \(error)", status: 3)
    }
}

/// Shortens a key for messages (one key is 1 200 bytes long).
func short(_ key: String) -> String {
    key.count > 24 ? String(key.prefix(20)) + "…(\(key.utf8.count) bytes)" : key
}

let arguments = Array(CommandLine.arguments.dropFirst())

switch (arguments.first, arguments.count) {
case ("write", 4):
    guard let seed = UInt64(arguments[2]), var generation = Int64(arguments[3]) else { fail("bad arguments") }
    let store = open(arguments[1])
    while true {
        let operation = CrashWorkload.operation(seed: seed, generation: generation)
        let changes: [DefaultsChange] = operation.changes.map {
            $0.isRemoval ? .remove($0.key) : .set($0.key, CrashWorkload.value(key: $0.key, generation: generation))
        }
        do {
            if operation.isBatch {
                try store.apply(changes)
            } else if case .set(let key, let value) = changes[0] {
                try store.setValue(value, forKey: key)
            } else {
                try store.removeValue(forKey: changes[0].key)
            }
        } catch {
            fail("write \(generation) failed: \(error)", status: 5)
        }
        say("ack \(generation)")
        generation += 1
    }

case ("check", 5):
    guard let seed = UInt64(arguments[2]), let acknowledged = Int64(arguments[4]) else { fail("bad arguments") }
    exit(CrashCheck(seed: seed, stateFile: arguments[3], acknowledged: acknowledged).run(store: arguments[1]))

case ("hammer", 5), ("hammer", 6):
    guard let id = Int(arguments[2]), let threads = Int(arguments[3]), let count = Int(arguments[4]) else {
        fail("bad arguments")
    }
    let store = open(arguments[1])
    if arguments.count == 6 {
        while !FileManager.default.fileExists(atPath: arguments[5]) { usleep(1_000) }
    }
    let failures = Hammer(store: store, writer: "w\(id)", threads: threads, count: count).run()
    for failure in failures.prefix(20) { say(failure) }
    say(failures.isEmpty ? "ok" : "failed \(failures.count)")
    exit(failures.isEmpty ? 0 : 1)

case ("standard-write", 3):
    do {
        try Defaults.standard.throwing.set(arguments[2], forKey: arguments[1])
    } catch {
        fail("write failed: \(error)", status: 5)
    }
    say("ok")

case ("touch", 2):
    umask(0)
    do {
        let store = open(arguments[1])
        try store.setValue(.string("created"), forKey: "touched")
        try store.apply((0..<24).map { index in
            .set("key-\(index)", CrashWorkload.value(key: "key-\(index)", generation: Int64(index)))
        })
    } catch {
        fail("write failed: \(error)", status: 5)
    }
    say("ok")

case ("keep-writing", 5):
    guard let id = Int(arguments[2]), let slots = Int(arguments[3]), slots > 0 else { fail("bad arguments") }
    let store = open(arguments[1])
    var generations = [Int](repeating: 0, count: slots)
    var number: Int64 = 1
    while !FileManager.default.fileExists(atPath: arguments[4]) {
        let slot = Int(number % Int64(slots))
        let key = "w\(id).s\(slot).g\(generations[slot])"
        do {
            try store.setValue(.int(number), forKey: key)
        } catch {
            fail("write \(number) failed: \(error)", status: 5)
        }
        say("ack \(key) \(number)")
        // About one write in three retires its key (a fixed, scattered choice).
        if (UInt64(number) &* 0x9E37_79B9_7F4A_7C15) >> 62 == 0 { generations[slot] += 1 }
        number += 1
    }
    say("done")

case ("writes", 3):
    guard let count = Int(arguments[2]) else { fail("bad arguments") }
    let store = open(arguments[1])
    do {
        for number in 0..<count { try store.setValue(.int(Int64(number)), forKey: "durability") }
    } catch {
        fail("write failed: \(error)", status: 5)
    }
    say("ok")

case ("empties", 3):
    guard let count = Int(arguments[2]) else { fail("bad arguments") }
    let store = open(arguments[1])
    do {
        for number in 0..<count {
            try store.setValue(.int(Int64(number)), forKey: "durability")
            try store.removeValue(forKey: "durability")
        }
    } catch {
        fail("write failed: \(error)", status: 5)
    }
    say("ok")

case ("writes-after", 4):
    guard let count = Int(arguments[3]) else { fail("bad arguments") }
    let first = open(arguments[1])
    let store = open(arguments[2])
    do {
        try first.setValue(.string("first"), forKey: "first")
        for number in 0..<count { try store.setValue(.int(Int64(number)), forKey: "durability") }
    } catch {
        fail("write failed: \(error)", status: 5)
    }
    say("ok")

case ("read", 2):
    do {
        let store = try ProviderRegistry.standard.makeProvider(arguments[1] + "?cache=off")
        let values = try store.allValues()
        for key in try store.keys() { _ = try store.value(forKey: key) }
        say("read \(values.count)")
    } catch {
        say("error \(error.code) \(error)")
    }

default:
    fail("unknown command or wrong number of arguments: \(arguments)")
}
