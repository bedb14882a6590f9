import AnyDefaults
import AnyDefaultsPlatform
import Foundation
import Synchronization

// The commands that work on any store: what each does is in main.swift.

func write(_ arguments: Arguments) throws {
    try arguments.expect(3...3)
    let (prefix, count) = (try arguments.text(1, "prefix"), try arguments.int(2, "count"))
    let store = try provider(arguments.text(0, "store"))
    for index in 0..<count {
        try store.setValue(.int(Int64(index)), forKey: "\(prefix).\(index)")
    }
}

func writeBatches(_ arguments: Arguments) throws {
    try arguments.expect(3...3)
    let (prefix, count) = (try arguments.text(1, "prefix"), try arguments.int(2, "count"))
    let store = try provider(arguments.text(0, "store"))
    // Observed, so that each batch is a transaction that also reads the old values.
    let observation = store.observe { _ in }
    for start in stride(from: 0, to: count, by: 10) {
        try store.apply((start..<min(start + 10, count)).map { .set("\(prefix).\($0)", .int(Int64($0))) })
    }
    observation.cancel()
}

func apply(_ arguments: Arguments) throws {
    try arguments.expect(1...Int.max)
    let store = try provider(arguments.text(0, "store"))
    for write in arguments.rest(from: 1) {
        if write == "clear" {
            try store.removeAll()
        } else {
            try store.apply(batch(write))
        }
    }
}

func get(_ arguments: Arguments) throws {
    try arguments.expect(2...2)
    let value = try provider(arguments.text(0, "store")).value(forKey: arguments.text(1, "key"))
    say(value.map { "\($0)" } ?? "nil")
}

func count(_ arguments: Arguments) throws {
    try arguments.expect(1...1)
    say("\(try provider(arguments.text(0, "store")).keys().count)")
}

func openAndProbe(_ arguments: Arguments) throws {
    try arguments.expect(1...2)
    if arguments.rest(from: 1).contains("--unprivileged") { try becomeUnprivileged() }
    let store = try provider(arguments.text(0, "store"))
    _ = try store.value(forKey: "probe")
    try store.setValue(.bool(true), forKey: "probe")
    say("ok")
}

func readWrite(_ arguments: Arguments) throws {
    try arguments.expect(2...3)
    if arguments.rest(from: 2).contains("--unprivileged") { try becomeUnprivileged() }
    let store = try provider(arguments.text(0, "store"))
    say("read \(try store.value(forKey: arguments.text(1, "key")).map { "\($0)" } ?? "nil")")
    try store.setValue(.bool(true), forKey: "probe")
    say("write ok")
}

func crash(_ arguments: Arguments) throws {
    try arguments.expect(2...Int.max)
    let store = try provider(arguments.text(0, "store"))
    try store.apply(arguments.rest(from: 1).map { try change(Substring($0)) })
    kill(getpid(), SIGKILL)
}

func hold(_ arguments: Arguments) throws {
    try arguments.expect(1...1)
    let store = try provider(arguments.text(0, "store"))
    say("ready")
    for round in 0... {
        try store.apply((0..<64).map { .set("hold.\($0)", .data(Data(repeating: UInt8(truncatingIfNeeded: round), count: 1 << 20))) })
    }
}

func holdLock(_ arguments: Arguments) throws {
    try arguments.expect(2...2)
    let text = try arguments.text(0, "store")
    let seconds = try arguments.number(1, "seconds")
    let lock = try writersLock(of: text, command: "hold-lock")
    guard lock(true) else { throw Failure(description: "could not lock \(text)") }
    say("locked")
    usleep(useconds_t(seconds * 1_000_000))
}

/// Holds the writers' lock of a store for `seconds`, as a writer committing back to back would:
/// it keeps the lock 20 ms at a time, using the CPU, and takes it again at once.
func hogLock(_ arguments: Arguments) throws {
    try arguments.expect(2...2)
    let text = try arguments.text(0, "store")
    let end = ContinuousClock.now + .seconds(try arguments.number(1, "seconds"))
    let lock = try writersLock(of: text, command: "hog-lock")
    guard lock(true) else { throw Failure(description: "could not lock \(text)") }
    say("locked")
    var spins: UInt64 = 0
    while ContinuousClock.now < end {
        let turn = ContinuousClock.now + .milliseconds(20)
        while ContinuousClock.now < turn { spins &+= 1 }
        _ = lock(false)
        guard lock(true) else { throw Failure(description: "could not lock \(text) again") }
    }
    _ = lock(false)
    withExtendedLifetime(spins) {}
}

/// Takes (`true`) or releases (`false`) the lock the writers of a store take, waiting as long as
/// it takes: the `flock` of a json: store's lock file, of a userdefaults: suite's preferences
/// directory or of an lmdb: store's directory; SQLite's write lock in WAL mode (an exclusive
/// record lock on byte 120 of the `-shm`, which must exist).
func writersLock(of text: String, command: String) throws -> (Bool) -> Bool {
    let configuration = try StoreConfiguration(parsing: text)
    let descriptor: Int32
    switch configuration.scheme {
    case "json":
        descriptor = open(configuration.location + ".lock", O_RDWR | O_CREAT, 0o600)
    case "userdefaults":
        // Every suite's writers lock the preferences directory.
        let suite = configuration.location.isEmpty ? nil : configuration.location
        guard let file = try UserDefaultsProvider.propertyListURL(forSuite: suite) else { throw Failure(description: "no file for \(text)") }
        descriptor = open(file.deletingLastPathComponent().path, O_RDONLY | O_DIRECTORY)
    case "lmdb":
        // The store's directory: the LMDB backend's own lock, taken before LMDB's.
        descriptor = open(configuration.location, O_RDONLY | O_DIRECTORY)
    case "sqlite":
        descriptor = open(configuration.location + "-shm", O_RDWR)
        guard descriptor >= 0 else { throw Failure(description: "could not open \(configuration.location)-shm") }
        return { taking in
            var region = flock()
            region.l_type = Int16(taking ? F_WRLCK : F_UNLCK)
            region.l_whence = Int16(SEEK_SET)
            region.l_start = 120
            region.l_len = 1
            return fcntl(descriptor, F_SETLKW, &region) == 0
        }
    default:
        throw Usage(description: "\(command): json:, userdefaults:, lmdb: and sqlite: stores have a lock to hold, not \(text)")
    }
    guard descriptor >= 0 else { throw Failure(description: "could not open the lock of \(text)") }
    return { taking in flock(descriptor, taking ? LOCK_EX : LOCK_UN) == 0 }
}

func writeForever(_ arguments: Arguments) throws {
    try arguments.expect(1...1)
    let store = try provider(arguments.text(0, "store"))
    var index: Int64 = 0
    while true {
        index += 1
        // Vary the size, so that a torn write would show.
        try store.apply([
            .set("counter", .int(index)),
            .set("payload", .string(String(repeating: "x", count: Int(index % 5000)))),
        ])
    }
}

func fill(_ arguments: Arguments) throws {
    try arguments.expect(1...1)
    let store = try provider(arguments.text(0, "store"))
    func value(_ index: Int) -> DefaultsValue { .data(Data(repeating: UInt8(index & 0xFF), count: 64 << 10)) }
    var count = 0
    var failure: DefaultsError?
    while failure == nil {
        do throws(DefaultsError) {
            try store.setValue(value(count), forKey: "fill.\(count)")
            count += 1
        } catch {
            failure = error
        }
    }
    say("full \(count) \(failure?.code.description ?? "-")")
    for index in 0..<count where try store.value(forKey: "fill.\(index)") != value(index) {
        throw Failure(description: "fill.\(index) is not what was written")
    }
    say("kept \(count)")
}

func writeBytes(_ arguments: Arguments) throws {
    try arguments.expect(3...3)
    let store = try provider(arguments.text(0, "store"))
    try store.setValue(.data(Data(repeating: 0xA5, count: arguments.int(2, "bytes"))), forKey: arguments.text(1, "key"))
}

func serve(_ arguments: Arguments) throws {
    try arguments.expect(1...1)
    let (store, close) = try openStore(arguments.text(0, "store"), cached: true)
    say("ready")
    while let line = readLine() {
        let changes = try batch(line)
        do throws(DefaultsError) {
            try store.apply(changes)
            say("ok")
        } catch {
            say(errorLine(error))
        }
    }
    close?()
}

func watch(_ arguments: Arguments) throws {
    try arguments.expect(2...2)
    let count = try arguments.int(1, "count")
    let (store, close) = try openStore(arguments.text(0, "store"))
    let events = Mutex<[DefaultsChangeEvent]>([])
    let observation = store.observe { event in events.withLock { $0.append(event) } }
    say("ready")
    let deadline = ContinuousClock.now + .seconds(10)
    while events.withLock({ $0.count }) < count, ContinuousClock.now < deadline { usleep(2_000) }
    observation.cancel()
    let received = events.withLock { $0 }
    for event in received.prefix(count) { say("\(event.key)=\(event.newValue.map { "\($0)" } ?? "nil")") }
    close?()
    if received.count < count { throw Failure(description: "\(received.count) of \(count) events within 10 s") }
}

#if os(Linux)
func leaks(_ arguments: Arguments) throws {
    try arguments.expect(2...2)
    let template = try arguments.text(0, "store with {n}")
    let count = try arguments.int(1, "count")
    // Closed stores are kept until the end: closing alone must let go of everything.
    var closed: [any DefaultsProvider] = []
    func cycle(_ range: Range<Int>, whileOpen: () -> Void = {}) throws(DefaultsError) {
        var stores: [(store: any DefaultsProvider, close: (() -> Void)?, observation: DefaultsObservation)] = []
        for index in range {
            let (store, close) = try openStore(template.replacingOccurrences(of: "{n}", with: "\(index)"), cached: index.isMultiple(of: 2))
            let observation = store.observe { _ in }
            try store.setValue(.int(Int64(index)), forKey: "written")
            stores.append((store, close, observation))
        }
        whileOpen()
        for entry in stores {
            guard let close = entry.close else { continue }
            close()
            closed.append(entry.store)
        }
        stores.removeAll()
    }
    // Whatever is made once per process (the inotify instance, Dispatch's threads and the
    // timerfd behind its timers, which a delayed call makes at once) is made here.
    try cycle(count..<count + 1)
    let fired = DispatchSemaphore(value: 0)
    DispatchQueue.global().asyncAfter(deadline: .now() + .milliseconds(10)) { fired.signal() }
    fired.wait()
    usleep(200_000)  // for the last callbacks to finish
    let before = ProcessResources.current
    var during = before
    for start in stride(from: 0, to: count, by: 20) {
        try cycle(start..<min(start + 20, count)) { if start == 0 { during = ProcessResources.current } }
    }
    let after = ProcessResources.settled(at: before, extraThreads: 2, timeout: .seconds(8))
    say("\(before)")
    say("\(during)")
    say("\(after)")
    withExtendedLifetime(closed) {}
}
#else
func leaks(_ arguments: Arguments) throws {
    throw Failure(description: "leaks counts what the process holds through Linux's proc file system: Linux only")
}
#endif
