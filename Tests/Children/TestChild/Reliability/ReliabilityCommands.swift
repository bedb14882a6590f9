import AnyDefaults
import AnyDefaultsPlatform
import Foundation

// The commands of the reliability tests (Tests/ReliabilityTests, scripts/crash-test): what each
// does is in main.swift.

func workload(_ arguments: Arguments) throws {
    try arguments.expect(3...3)
    let seed = try seed(arguments)
    var generation = Int64(try arguments.int(2, "first-generation"))
    let store = try provider(arguments.text(0, "store"))
    while true {
        let operation = CrashWorkload.operation(seed: seed, generation: generation)
        let changes: [DefaultsChange] = operation.changes.map {
            $0.isRemoval ? .remove($0.key) : .set($0.key, CrashWorkload.value(key: $0.key, generation: generation))
        }
        if operation.isBatch {
            try store.apply(changes)
        } else if case .set(let key, let value) = changes[0] {
            try store.setValue(value, forKey: key)
        } else {
            try store.removeValue(forKey: changes[0].key)
        }
        say("ack \(generation)")
        generation += 1
    }
}

func check(_ arguments: Arguments) throws -> Int32 {
    try arguments.expect(4...4)
    let check = CrashCheck(
        seed: try seed(arguments), stateFile: try arguments.text(2, "state-file"),
        acknowledged: Int64(try arguments.int(3, "acknowledged")))
    return try check.run(store: arguments.text(0, "store"))
}

func hammer(_ arguments: Arguments) throws -> Int32 {
    try arguments.expect(4...5)
    let (id, threads, count) = (try arguments.int(1, "id"), try arguments.int(2, "threads"), try arguments.int(3, "count"))
    let store = try provider(arguments.text(0, "store"))
    if arguments.count == 5 {
        let go = try arguments.text(4, "go-file")
        while !FileManager.default.fileExists(atPath: go) { usleep(1_000) }
    }
    let failures = Hammer(store: store, writer: "w\(id)", threads: threads, count: count).run()
    for failure in failures.prefix(20) { say(failure) }
    say(failures.isEmpty ? "ok" : "failed \(failures.count)")
    return failures.isEmpty ? 0 : 1
}

func standardWrite(_ arguments: Arguments) throws {
    try arguments.expect(2...2)
    try Defaults.standard.throwing.set(arguments.text(1, "value"), forKey: arguments.text(0, "key"))
    say("ok")
}

func touch(_ arguments: Arguments) throws {
    try arguments.expect(1...1)
    umask(0)
    let store = try provider(arguments.text(0, "store"))
    try store.setValue(.string("created"), forKey: "touched")
    try store.apply((0..<24).map { index in
        .set("key-\(index)", CrashWorkload.value(key: "key-\(index)", generation: Int64(index)))
    })
    say("ok")
}

func keepWriting(_ arguments: Arguments) throws {
    try arguments.expect(4...4)
    let (id, slots, stop) = (try arguments.int(1, "id"), try arguments.int(2, "slots"), try arguments.text(3, "stop-file"))
    guard slots > 0 else { throw Usage(description: "keep-writing: <slots> must be positive") }
    let store = try provider(arguments.text(0, "store"))
    var generations = [Int](repeating: 0, count: slots)
    var number: Int64 = 1
    while !FileManager.default.fileExists(atPath: stop) {
        let slot = Int(number % Int64(slots))
        let key = "w\(id).s\(slot).g\(generations[slot])"
        try store.setValue(.int(number), forKey: key)
        say("ack \(key) \(number)")
        // About one write in three retires its key (a fixed, scattered choice).
        if (UInt64(number) &* 0x9E37_79B9_7F4A_7C15) >> 62 == 0 { generations[slot] += 1 }
        number += 1
    }
    say("done")
}

func writes(_ arguments: Arguments) throws {
    try arguments.expect(2...3)
    let count = try arguments.int(1, "count")
    let store = try provider(arguments.text(0, "store"))
    for number in 0..<count { try store.setValue(.int(Int64(number)), forKey: "durability") }
    if arguments.rest(from: 2) == ["durable"] { try store.makeDurable() }
    say("ok")
}

func empties(_ arguments: Arguments) throws {
    try arguments.expect(2...2)
    let count = try arguments.int(1, "count")
    let store = try provider(arguments.text(0, "store"))
    for number in 0..<count {
        try store.setValue(.int(Int64(number)), forKey: "durability")
        try store.removeValue(forKey: "durability")
    }
    say("ok")
}

func writesAfter(_ arguments: Arguments) throws {
    try arguments.expect(3...3)
    let count = try arguments.int(2, "count")
    let first = try provider(arguments.text(0, "first-store"))
    let store = try provider(arguments.text(1, "store"))
    try first.setValue(.string("first"), forKey: "first")
    for number in 0..<count { try store.setValue(.int(Int64(number)), forKey: "durability") }
    say("ok")
}

func readAll(_ arguments: Arguments) throws {
    try arguments.expect(1...1)
    let store = try provider(arguments.text(0, "store"))
    let values = try store.allValues()
    for key in try store.keys() { _ = try store.value(forKey: key) }
    say("read \(values.count)")
}

/// Shortens a key for messages (one key of the workload is 1 200 bytes long).
func short(_ key: String) -> String {
    key.count > 24 ? String(key.prefix(20)) + "…(\(key.utf8.count) bytes)" : key
}

/// The workload's seed, the second argument.
private func seed(_ arguments: Arguments) throws(Usage) -> UInt64 {
    let text = try arguments.text(1, "seed")
    guard let seed = UInt64(text) else { throw Usage(description: "\(arguments.command): <seed> must be an unsigned integer, not \(text)") }
    return seed
}
