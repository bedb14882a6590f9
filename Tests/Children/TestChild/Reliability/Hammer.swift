import AnyDefaults
import Foundation
import Synchronization

/// Many threads writing one store at once: each its own keys, all of them one shared key and one
/// shared pair written by batches; a reader checks the pair is never seen half written.
struct Hammer: Sendable {
    let store: any DefaultsProvider
    let writer: String
    let threads: Int
    let count: Int

    /// What the threads share.
    private final class Progress: Sendable {
        let failures = Mutex<[String]>([])
        let writing: Atomic<Int>

        init(writers: Int) { writing = Atomic(writers) }

        func record(_ failure: String) { failures.withLock { $0.append(failure) } }
    }

    func run() -> [String] {
        let progress = Progress(writers: threads)
        let group = DispatchGroup()
        for thread in 0..<threads {
            let name = "\(writer).t\(thread)"
            group.enter()
            Thread.detachNewThread { [self] in
                defer {
                    progress.writing.subtract(1, ordering: .releasing)
                    group.leave()
                }
                do {
                    for index in 0..<count {
                        try store.setValue(.int(Int64(index)), forKey: "\(name).\(index)")
                        try store.setValue(.string("\(name).\(index)"), forKey: "shared")
                        if index % 5 == 4 {
                            let tag = DefaultsValue.string("\(name).\(index)")
                            try store.apply([.set("pair.a", tag), .set("pair.b", tag), .set("\(name).batch.\(index)", .int(Int64(index)))])
                        }
                    }
                } catch {
                    progress.record("\(name): a write failed: \(error)")
                }
            }
        }
        // The reader: what it sees must never be a torn batch nor a value nobody wrote.
        let atomic = store.capabilities.contains(.atomicBatch)
        var reads = 0
        while progress.writing.load(ordering: .acquiring) > 0 || reads == 0 {
            reads += 1
            do {
                let values = try store.allValues()
                if atomic, values["pair.a"] != values["pair.b"] {
                    progress.record("a batch was seen half applied (pair.a and pair.b differ)")
                }
                for (key, value) in values where key.hasPrefix(writer + ".") {
                    guard let index = key.split(separator: ".").last.flatMap({ Int64($0) }), value == .int(index) else {
                        progress.record("\(key) holds a value nobody wrote")
                        continue
                    }
                }
            } catch {
                progress.record("a read failed: \(error)")
            }
        }
        group.wait()
        return progress.failures.withLock { $0 }
    }
}
