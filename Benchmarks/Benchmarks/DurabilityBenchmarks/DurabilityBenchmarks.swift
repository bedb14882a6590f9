import AnyDefaults
import Benchmark
import BenchmarkSupport
import Foundation

// The write rate of each backend's default store string, and of the other durability of the
// SQLite and LMDB backends, side by side (issue 27.6): one write of a changed Int through
// Defaults(url:), taken in turn so that every ratio is timed in pairs. Ratios are against the
// SQLite default (synchronous NORMAL: survives an application crash, not a power loss).

let benchmarks: @Sendable () -> Void = {
    let stores: [(name: String, template: String)] = [
        ("sqlite: (default, NORMAL)", "sqlite:{dir}/s.sqlite"),
        ("sqlite:?durability=full", "sqlite:{dir}/full.sqlite?durability=full"),
        ("lmdb: (default, synced)", "lmdb:{dir}/env"),
        ("lmdb:?durability=nosync", "lmdb:{dir}/nosync?durability=nosync"),
        ("json: (default, fsync)", "json:{dir}/s.json"),
        ("userdefaults: (default, fsync)", "userdefaults:anydefaults-durability-benchmark"),
    ]
    let fixture = Fixture("durability") { directory in
        try stores.map { store in try Defaults(url: store.template.replacingOccurrences(of: "{dir}", with: directory.path)) }
    }
    let turns = Turns()
    func writes(_ index: Int) -> (Int) throws -> Void {
        { count in
            let defaults = try fixture.value()[index]
            for _ in 0..<count {
                try defaults.throwing.set(turns.next(), forKey: "counter")
            }
        }
    }
    Paired.registerInterleaved(
        "Durability: one write with each default store string, interleaved", repetitions: 20, maxDuration: .seconds(6),
        setup: { try fixture.setUp() },
        teardown: {
            if let all = try? fixture.value() { for defaults in all { try? defaults.throwing.removeAll() } }
            fixture.tearDown()
        },
        operations: stores.indices.map(writes),
        ratios: stores.indices.dropFirst().map { index in
            .init(metric: Paired.custom("\(stores[index].name) / sqlite: ×1000"), subject: index, baseline: 0)
        })
}
