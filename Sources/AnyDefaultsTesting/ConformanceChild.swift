import AnyDefaultsCore
import Foundation
import Synchronization

import AnyDefaultsPlatform

/// The child side of the conformance suite's multi-process checks: the whole `main.swift` of a
/// small executable that opens your provider the way your suite does.
///
/// ```swift
/// // Sources/MyStoreConformanceChild/main.swift
/// import AnyDefaultsTesting
/// import MyStore
///
/// ConformanceChild.main { storage in
///     try MyStore(path: storage.directory.appendingPathComponent("store.db").path)
/// }
/// ```
///
/// The suite starts it with the storage in environment variables and sends it requests on
/// standard input, one line each (open, read, write, list, observe, write many keys, write
/// batches until killed, write a deep value on a small stack); it answers on standard output.
/// Docs/Conformance.md describes the protocol. Run by hand, it prints how it is meant to be used
/// and exits with status 64.
public enum ConformanceChild {
    /// Whether the conformance suite started this process as its child, for a program that is
    /// also something else (a command-line tool that verifies itself).
    public static var isRequested: Bool {
        ProcessInfo.processInfo.environment[ChildConnection.Variable.protocolVersion] != nil
    }

    /// Serves the suite's requests with providers that `open` opens, then exits.
    public static func main(open: @escaping DefaultsConformanceSuite.Open) -> Never {
        let environment = ProcessInfo.processInfo.environment
        guard environment[ChildConnection.Variable.protocolVersion] == "1",
            let directory = environment[ChildConnection.Variable.directory],
            let identifier = environment[ChildConnection.Variable.identifier]
        else {
            FileHandle.standardError.write(Data("""
                This is a child process of the AnyDefaults conformance suite (AnyDefaultsTesting): \
                DefaultsConformanceSuite starts it with \(ChildConnection.Variable.protocolVersion), \
                \(ChildConnection.Variable.directory) and \(ChildConnection.Variable.identifier) set and \
                talks to it over standard input and output. It is not meant to be run by hand.

                """.utf8))
            exit(64)
        }
        let session = ChildSession(open: open, storage: ConformanceStorage(directory: URL(fileURLWithPath: directory), identifier: identifier))
        session.serve()
        exit(0)
    }
}

/// One child process serving the suite: a provider it opens on request, and the events it saw.
final class ChildSession: Sendable {
    private let open: DefaultsConformanceSuite.Open
    private let storage: ConformanceStorage
    private let provider = Mutex<(any DefaultsProvider)?>(nil)
    private let events = EventRecorder()
    private let observation = Mutex<DefaultsObservation?>(nil)

    init(open: @escaping DefaultsConformanceSuite.Open, storage: ConformanceStorage) {
        self.open = open
        self.storage = storage
    }

    /// Answers requests until `quit` or the end of standard input.
    func serve() {
        while let line = readLine(strippingNewline: true) {
            guard line.hasPrefix(ChildConnection.marker) else { continue }
            let words = line.dropFirst(ChildConnection.marker.count).split(separator: " ", omittingEmptySubsequences: false)
            guard let verb = words.first else { continue }
            if verb == "quit" {
                observation.withLock { $0 = nil }
                provider.withLock { $0 = nil }
                say("bye")
                return
            }
            do {
                say(try answer(String(verb), Array(words.dropFirst())))
            } catch {
                say(ChildWire.errorAnswer(error))
            }
        }
    }

    /// Writes one protocol line at once, unbuffered: what the suite reads after a kill is
    /// everything written before it.
    func say(_ words: String) {
        let bytes = Array((ChildConnection.marker + words + "\n").utf8)
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

    private func current() throws -> any DefaultsProvider {
        guard let provider = provider.withLock({ $0 }) else {
            throw ChildFailure(description: "no provider is open (send open first)")
        }
        return provider
    }

    private func answer(_ verb: String, _ arguments: [Substring]) throws -> String {
        func argument(_ index: Int) throws -> Substring {
            guard index < arguments.count else { throw ChildFailure(description: "\(verb) needs \(index + 1) argument(s)") }
            return arguments[index]
        }
        func number(_ index: Int) throws -> Int {
            guard let value = Int(try argument(index)) else { throw ChildFailure(description: "\(verb): argument \(index + 1) is not a number") }
            return value
        }
        switch verb {
        case "open":
            let opened = try open(storage)
            provider.withLock { $0 = opened }
            return "ok \(opened.capabilities.rawValue)"
        case "close":
            observation.withLock { $0 = nil }
            provider.withLock { $0 = nil }
            return "ok"
        case "get":
            let key = try ChildWire.text(from: argument(0))
            guard let value = try current().value(forKey: key) else { return "absent" }
            return "value \(ChildWire.value(value))"
        case "apply":
            try current().apply(ChildWire.batch(from: argument(0)))
            return "ok"
        case "removeAll":
            try current().removeAll()
            return "ok"
        case "keys":
            return "keys \(ChildWire.keys(try current().keys()))"
        case "all":
            return "all \(ChildWire.entries(try current().allValues().map { ($0.key, $0.value) }))"
        case "observe":
            let events = events
            let registered = try current().observe { events.record($0) }
            observation.withLock { $0 = registered }
            return "ok"
        case "events":
            // Waits (at most the given milliseconds) for at least the given number of events,
            // then a little more for any that should not come.
            let seen = events.wait(for: try number(0), timeout: Double(try number(1)) / 1000)
            events.clear()
            return "events \(ChildWire.events(seen))"
        case "increment":
            try DefaultsConformanceSuite.increment(current(), key: ChildWire.text(from: argument(0)), times: number(1))
            return "ok"
        case "removeIfPresent":
            // One character per key PREFIX0 … PREFIX(COUNT-1): 1 when removeValueIfPresent told it was there.
            let provider = try current()
            let prefix = try ChildWire.text(from: argument(0))
            var told = ""
            for index in 0..<(try number(1)) { told += try provider.removeValueIfPresent(forKey: "\(prefix)\(index)") ? "1" : "0" }
            return "told \(told)"
        case "burst":
            try burst(prefix: ChildWire.text(from: argument(0)), count: number(1), batchSize: number(2))
            return "ok"
        case "crash":
            try crashLoop(
                prefix: ChildWire.text(from: argument(0)), keys: number(1), bytes: number(2), generation: number(3),
                conditional: arguments.count > 4 && arguments[4] == "conditional")
        case "deep":
            let depth = try number(0)
            let problem = SmallStackProbe.run(try current(), depth: depth)
            return problem.map { "mismatch \(ChildWire.text($0))" } ?? "ok"
        default:
            throw ChildFailure(description: "unknown request \(verb)")
        }
    }

    /// Writes `count` keys `prefix0`, `prefix1`, …, each holding its number: the first half one
    /// by one, the rest in batches.
    private func burst(prefix: String, count: Int, batchSize: Int) throws {
        let provider = try current()
        for index in 0..<(count / 2) { try provider.setValue(.int(Int64(index)), forKey: "\(prefix)\(index)") }
        for start in stride(from: count / 2, to: count, by: max(1, batchSize)) {
            try provider.apply((start..<min(start + max(1, batchSize), count)).map { .set("\(prefix)\($0)", .int(Int64($0))) })
        }
    }

    /// Applies batches for ever, announcing each (`begin G`, `ack G`) so that the suite can kill
    /// this process in the middle of one. See ``CrashBatch``. `conditional`: through
    /// `apply(_:ifUnchanged:)`, expecting the previous generation's marker.
    private func crashLoop(prefix: String, keys: Int, bytes: Int, generation: Int, conditional: Bool) throws -> Never {
        let provider = try current()
        var generation = generation
        // The marker the batch removes, as this process last saw it.
        var marker = conditional ? try provider.value(forKey: "\(prefix)m.\(generation - 1)") : nil
        while true {
            say("begin \(generation)")
            let changes = CrashBatch.changes(prefix: prefix, keys: keys, bytes: bytes, generation: generation)
            if conditional {
                guard try provider.apply(changes, ifUnchanged: ["\(prefix)m.\(generation - 1)": marker]) else {
                    throw ChildFailure(description: "apply(_:ifUnchanged:) did not apply: the marker of generation \(generation - 1) is not as the last batch left it")
                }
                marker = .int(Int64(generation))
            } else {
                try provider.apply(changes)
            }
            say("ack \(generation)")
            generation += 1
        }
    }
}

/// The batches of the crash checks. Batch `G` sets every key `PREFIXk.N` to a value of
/// generation `G` (`[G, a string of G's letter]`), sets the marker `PREFIXm.G` and removes the
/// marker of `G - 1` in its middle: after a kill, every key holds one generation and exactly
/// that generation's marker exists, or the batch was torn.
enum CrashBatch {
    static func value(generation: Int, bytes: Int) -> DefaultsValue {
        let letter = Character(UnicodeScalar(UInt8(97 + generation % 26)))
        return .array([.int(Int64(generation)), .string(String(repeating: letter, count: bytes))])
    }

    static func changes(prefix: String, keys: Int, bytes: Int, generation: Int) -> [DefaultsChange] {
        var changes: [DefaultsChange] = (0..<keys).map { .set("\(prefix)k.\($0)", value(generation: generation, bytes: bytes)) }
        changes.insert(contentsOf: [.remove("\(prefix)m.\(generation - 1)"), .set("\(prefix)m.\(generation)", .int(Int64(generation)))], at: keys / 2)
        return changes
    }

    /// The generation a stored value holds, if it is one of this batch's values.
    static func generation(of value: DefaultsValue?, bytes: Int) -> Int? {
        guard case .array(let parts)? = value, parts.count == 2, case .int(let generation) = parts[0] else { return nil }
        return parts[1] == Self.value(generation: Int(generation), bytes: bytes).arrayItems?[1] ? Int(generation) : nil
    }
}

extension DefaultsValue {
    var arrayItems: [DefaultsValue]? { if case .array(let items) = self { items } else { nil } }
}

/// Writes, reads, lists and observes a value at the maximum depth on a thread with a 512 KiB
/// stack, where a provider that recurses once per level with a large frame overflows it.
enum SmallStackProbe {
    static let stackSize = 512 * 1024
    static let key = "smallStack.deep"

    /// `nil` when everything worked, else what went wrong; run on the calling thread's own
    /// small-stack helper thread.
    static func run(_ provider: any DefaultsProvider, depth: Int) -> String? {
        let result = Mutex<String?>("the small-stack thread did not finish")
        let done = DispatchSemaphore(value: 0)
        let thread = Thread {
            result.withLock { $0 = probe(provider, depth: depth) }
            done.signal()
        }
        thread.stackSize = stackSize
        thread.start()
        done.wait()
        return result.withLock { $0 }
    }

    private static func probe(_ provider: any DefaultsProvider, depth: Int) -> String? {
        let value = ConformanceValues.nested(depth: depth, leaf: .string("leaf"))
        // Observed, so that a provider delivering events on the writing thread does so here too.
        let observation = provider.observe { event in _ = event.newValue?.nestingDepth }
        defer { observation.cancel() }
        do {
            try provider.setValue(value, forKey: key)
            let read = try provider.value(forKey: key)
            guard ConformanceExactness.equal(read, value) else { return "the value read back differs: \(ConformanceText.firstDifference(read, value) ?? "")" }
            let all = try provider.allValues()
            guard ConformanceExactness.equal(all[key], value) else { return "allValues() holds a different value" }
            guard try provider.keys().contains(key) else { return "keys() leaves the key out" }
            try provider.removeValue(forKey: key)
        } catch {
            return "threw \(ConformanceText.error(error))"
        }
        return nil
    }
}
