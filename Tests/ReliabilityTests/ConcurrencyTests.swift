import AnyDefaults
import Dispatch
import Foundation
import Synchronization
import Testing
import TestSupport

/// Several processes and many threads on one store: no update to distinct keys is lost, batches
/// are never seen half applied on stores that claim atomic batches, and the key they all write
/// ends with the last write of one of the writers (last writer wins). `scripts/tsan` runs these
/// under ThreadSanitizer.
@Suite(.ownThreads) struct ConcurrencyTests {
    static let processes = 2
    static let threadsPerProcess = 3
    static let threadsHere = 6
    static let count = 20

    @Test(arguments: TestStore.allSchemes)
    func processesAndThreadsLoseNoUpdate(scheme: String) throws {
        try withTestStore(scheme) { store, directory in
            let go = directory.path("go")
            let multiProcess = try store.open().capabilities.contains(.multiProcess)
            let children = try (multiProcess ? 0..<Self.processes : 0..<0).map { id in
                try ChildProcess.start(
                    "TestChild",
                    ["hammer", store.store, String(id), String(Self.threadsPerProcess), String(Self.count), go],
                    environment: store.environment)
            }
            // Drain the children's output as it comes: a child blocked on a full pipe (a flood of
            // sanitizer reports) could hold the store's lock and stall everyone.
            let outputs = children.map { child in
                (Drain(child.output.fileHandleForReading), Drain(child.error.fileHandleForReading))
            }
            _ = FileManager.default.createFile(atPath: go, contents: nil)

            // Here: half the threads share one instance, the others open their own.
            let shared = try store.open()
            let failures = Failures()
            DispatchQueue.concurrentPerform(iterations: Self.threadsHere) { thread in
                do {
                    let provider = thread % 2 == 0 ? shared : try store.open()
                    for index in 0..<Self.count {
                        try provider.setValue(.int(Int64(index)), forKey: "here.t\(thread).\(index)")
                        try provider.apply([.set("shared", .string("here.t\(thread).\(index)")), .remove("here.t\(thread).gone")])
                        if index % 4 == 0 { _ = try provider.allValues() }
                    }
                } catch {
                    failures.record("thread \(thread): \(error)")
                }
            }
            for (id, child) in children.enumerated() {
                child.process.waitUntilExit()
                let output = outputs[id].0.text
                let errors = outputs[id].1.text
                if child.process.terminationStatus != 0 || !output.hasSuffix("ok\n") || errors.contains("ThreadSanitizer") {
                    failures.record("process \(id) (status \(child.process.terminationStatus)): \(output) \(errors.prefix(4000))")
                }
            }
            #expect(failures.all.isEmpty, "\(failures.all.joined(separator: "\n"))")

            // Every distinct key holds its value: no update was lost.
            let values = try store.open().allValues()
            var expected: [String: DefaultsValue] = [:]
            var lastWrites: Set<DefaultsValue> = []
            for thread in 0..<Self.threadsHere {
                for index in 0..<Self.count { expected["here.t\(thread).\(index)"] = .int(Int64(index)) }
                lastWrites.insert(.string("here.t\(thread).\(Self.count - 1)"))
            }
            for id in 0..<children.count {
                for thread in 0..<Self.threadsPerProcess {
                    let name = "w\(id).t\(thread)"
                    for index in 0..<Self.count {
                        expected["\(name).\(index)"] = .int(Int64(index))
                        if index % 5 == 4 { expected["\(name).batch.\(index)"] = .int(Int64(index)) }
                    }
                    lastWrites.insert(.string("\(name).\(Self.count - 1)"))
                }
            }
            let lost = expected.filter { values[$0.key] != $0.value }.keys.sorted()
            #expect(lost.isEmpty, "\(lost.count) updates lost, for example \(lost.prefix(5))")
            // The shared key: the last write of one of the writers.
            #expect(values["shared"].map { lastWrites.contains($0) } == true, "shared = \(String(describing: values["shared"]))")
            if !children.isEmpty, try store.open().capabilities.contains(.atomicBatch) {
                #expect(values["pair.a"] != nil)
                #expect(values["pair.a"] == values["pair.b"], "the last batch on the pair was applied in part")
            }
        }
    }
}

/// Failures collected from many threads.
final class Failures: Sendable {
    private let items = Mutex<[String]>([])

    func record(_ failure: String) { items.withLock { $0.append(failure) } }

    var all: [String] { items.withLock { $0 } }
}

/// Reads a pipe to its end on a thread of its own.
final class Drain: Sendable {
    private let data = Mutex(Data())
    private let done = DispatchGroup()

    init(_ handle: FileHandle) {
        done.enter()
        DispatchQueue.global().async { [self] in
            let bytes = handle.readDataToEndOfFile()
            data.withLock { $0 = bytes }
            done.leave()
        }
    }

    /// Everything the pipe delivered, once its writer closed it.
    var text: String {
        done.wait()
        return String(decoding: data.withLock { $0 }, as: UTF8.self)
    }
}
