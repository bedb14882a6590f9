import AnyDefaults
import Foundation

/// The check after a kill: opens the store, compares it with what the workload must have left,
/// and records the state found for the next check.
struct CrashCheck {
    let seed: UInt64
    let stateFile: String
    let acknowledged: Int64

    /// What the previous check found: the generation of every key, and the last generation used.
    struct State: Codable {
        var base: Int64 = 0
        var keys: [String: Int64] = [:]
    }

    func run(store text: String) throws(DefaultsError) -> Int32 {
        var state = State()
        if let data = FileManager.default.contents(atPath: stateFile) {
            guard let decoded = try? JSONDecoder().decode(State.self, from: data) else {
                say("failure: the state file is unreadable")
                return 2
            }
            state = decoded
        }
        guard acknowledged >= state.base else {
            say("failure: acknowledged \(acknowledged) is before the base \(state.base)")
            return 2
        }
        // What the acknowledged writes left.
        var expected = state.keys
        if acknowledged > state.base {
            for generation in (state.base + 1)...acknowledged {
                for change in CrashWorkload.operation(seed: seed, generation: generation).changes {
                    expected[change.key] = change.isRemoval ? nil : generation
                }
            }
        }
        // The write that may have been under way at the kill.
        let inFlightGeneration = acknowledged + 1
        let inFlight = CrashWorkload.operation(seed: seed, generation: inFlightGeneration)
        let inFlightKeys = Dictionary(inFlight.changes.map { ($0.key, $0.isRemoval) }, uniquingKeysWith: { a, _ in a })

        let store = try provider(text)
        let actual: [String: DefaultsValue]
        let keys: [String]
        do {
            actual = try store.allValues()
            keys = try store.keys()
        } catch {
            say("failure: reading the store after the kill failed: \(error)")
            return 1
        }
        var failures: [String] = []
        if Set(keys) != Set(actual.keys) || keys.count != actual.count {
            failures.append("keys() (\(keys.count)) differs from allValues() (\(actual.count))")
        }
        var found: [String: Int64] = [:]
        var applied = 0
        var notApplied = 0
        for (key, value) in actual {
            guard CrashWorkload.keys.contains(key) else {
                failures.append("unexpected key \(short(key))")
                continue
            }
            guard let generation = CrashWorkload.generation(of: value),
                value == CrashWorkload.value(key: key, generation: generation)
            else {
                failures.append("\(short(key)) holds a torn or foreign value")
                continue
            }
            found[key] = generation
        }
        for key in Set(expected.keys).union(found.keys).union(inFlightKeys.keys) {
            let before = expected[key]
            let now = found[key]
            if let isRemoval = inFlightKeys[key] {
                let after: Int64? = isRemoval ? nil : inFlightGeneration
                if before == after { continue }
                if now == after {
                    applied += 1
                } else if now == before {
                    notApplied += 1
                } else {
                    failures.append(
                        "\(short(key)) holds generation \(now.map(String.init) ?? "none"), expected \(before.map(String.init) ?? "none") or the write in flight")
                }
            } else if now != before {
                let problem = (now ?? 0) < (before ?? 0) || now == nil ? "an acknowledged write is missing" : "a write from nowhere"
                failures.append(
                    "\(short(key)) holds generation \(now.map(String.init) ?? "none"), expected \(before.map(String.init) ?? "none"): \(problem)")
            }
        }
        if store.capabilities.contains(.atomicBatch), applied > 0, notApplied > 0 {
            failures.append("the batch in flight (generation \(inFlightGeneration)) was applied in part: \(applied) of \(applied + notApplied) keys")
        }
        guard failures.isEmpty else {
            for failure in failures { say("failure: \(failure)") }
            return 1
        }
        state = State(base: inFlightGeneration, keys: found)
        do {
            try JSONEncoder().encode(state).write(to: URL(fileURLWithPath: stateFile), options: .atomic)
        } catch {
            say("failure: could not record the state: \(error)")
            return 2
        }
        let outcome = applied > 0 ? "applied" : (notApplied > 0 ? "not-applied" : "neutral")
        say("ok keys=\(found.count) in-flight=\(outcome)")
        return 0
    }
}
