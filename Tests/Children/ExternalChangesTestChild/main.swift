// Another process for the tests of changes from other processes. It opens stores by configuration
// string (any backend of the standard registry).
//
//   ExternalChangesTestChild <store> <write>...
//       Opens the store (uncached) and makes each following argument one write:
//       key=7 sets key to .int(7); -key removes key; a=1,-b,c=3 is one batch (one apply) of
//       those changes; clear removes every key.
//
//   ExternalChangesTestChild watch <store> <count>
//       Opens the store (uncached), observes it, prints "ready", then prints each of the first
//       <count> events as key=value (key=nil for a removal) and exits; status 2 if they do not
//       all arrive within 10 s.
//
//   ExternalChangesTestChild serve <store>
//       Opens the store behind a cache and, for each line read from standard input (a change as
//       above, or a batch), makes that one write and prints "ok" once it returned.
//
//   ExternalChangesTestChild leaks <store with {n}> <count>
//       Opens <count> stores, {n} replaced by 0, 1, ..., twenty at a time, each observed
//       (every other one through a cache) and written once, then closes (where the backend can
//       be closed) and releases them. Prints the process's resources (ProcessResources) on three
//       lines: before, while the first twenty are open, and after (once settled, up to 8 s).
//       Linux only.
//
// Exit status 1 and the error on standard error if anything fails.
import AnyDefaults
import Foundation
import Synchronization

func fail(_ message: String) -> Never {
    FileHandle.standardError.write(Data("ExternalChangesTestChild: \(message)\n".utf8))
    exit(1)
}

func change(_ text: Substring) -> DefaultsChange {
    if text.hasPrefix("-") { return .remove(String(text.dropFirst())) }
    guard let equals = text.firstIndex(of: "="), let value = Int64(text[text.index(after: equals)...]) else {
        fail("a change is key=<integer> or -key, not \(text)")
    }
    return .set(String(text[..<equals]), .int(value))
}

/// Opens the store `configuration` names, behind a cache if `cached`, and how to close it if the
/// backend can be closed (the others stop when released).
func open(_ configuration: String, cached: Bool) throws(DefaultsError) -> (any DefaultsProvider, close: (() -> Void)?) {
    var parsed = try StoreConfiguration(parsing: configuration)
    parsed.cache = false
    let store = try ProviderRegistry.standard.makeProvider(parsed)
    let close: (() -> Void)? =
        if let sqlite = store as? SQLiteProvider { { sqlite.close() } }
        else if let lmdb = store as? LMDBProvider { { lmdb.close() } }
        else { nil }
    return (cached ? caching(store) : store, close)
}

func caching<Provider: DefaultsProvider>(_ provider: Provider) -> any DefaultsProvider { provider.cached() }

func write(_ configuration: String, _ writes: ArraySlice<String>) throws(DefaultsError) {
    let (store, _) = try open(configuration, cached: false)
    for write in writes {
        if write == "clear" {
            try store.removeAll()
        } else {
            try store.apply(write.split(separator: ",").map(change))
        }
    }
}

func serve(_ configuration: String) throws(DefaultsError) {
    let (store, close) = try open(configuration, cached: true)
    FileHandle.standardOutput.write(Data("ready\n".utf8))
    while let line = readLine() {
        try store.apply(line.split(separator: ",").map(change))
        FileHandle.standardOutput.write(Data("ok\n".utf8))  // unbuffered: the write returned
    }
    close?()
}

func leaks(_ template: String, count: Int) throws(DefaultsError) {
    // Closed stores are kept until the end: closing alone must let go of everything.
    var closed: [any DefaultsProvider] = []
    func cycle(_ range: Range<Int>, whileOpen: () -> Void = {}) throws(DefaultsError) {
        var stores: [(store: any DefaultsProvider, close: (() -> Void)?, observation: DefaultsObservation)] = []
        for index in range {
            let configuration = template.replacingOccurrences(of: "{n}", with: "\(index)")
            let (store, close) = try open(configuration, cached: index.isMultiple(of: 2))
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
    print(before)
    print(during)
    print(after)
    withExtendedLifetime(closed) {}
}

func watch(_ configuration: String, count: Int) throws(DefaultsError) {
    let (store, close) = try open(configuration, cached: false)
    let events = Mutex<[DefaultsChangeEvent]>([])
    let observation = store.observe { event in events.withLock { $0.append(event) } }
    FileHandle.standardOutput.write(Data("ready\n".utf8))  // unbuffered: the parent waits for it
    let deadline = ContinuousClock.now + .seconds(10)
    while events.withLock({ $0.count }) < count, ContinuousClock.now < deadline { usleep(2_000) }
    observation.cancel()
    let received = events.withLock { $0 }
    let lines = received.prefix(count).map { "\($0.key)=\($0.newValue.map { "\($0)" } ?? "nil")\n" }
    FileHandle.standardOutput.write(Data(lines.joined().utf8))
    close?()
    if received.count < count { exit(2) }
}

let arguments = Array(CommandLine.arguments.dropFirst())
do {
    switch arguments.first {
    case "watch":
        guard arguments.count == 3, let count = Int(arguments[2]) else { fail("usage: watch <store> <count>") }
        try watch(arguments[1], count: count)
    case "serve":
        guard arguments.count == 2 else { fail("usage: serve <store>") }
        try serve(arguments[1])
    case "leaks":
        guard arguments.count == 3, let count = Int(arguments[2]) else { fail("usage: leaks <store with {n}> <count>") }
        try leaks(arguments[1], count: count)
    case let configuration?:
        try write(configuration, arguments.dropFirst())
    case nil:
        fail("usage: ExternalChangesTestChild <store> <write>... | leaks <store with {n}> <count>")
    }
} catch {
    fail("\(error)")
}
