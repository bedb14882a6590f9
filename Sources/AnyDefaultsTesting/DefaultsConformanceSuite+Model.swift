import AnyDefaultsCore
import Foundation

extension DefaultsConformanceSuite {
    /// The model check: random sequences of operations (writes, removals, batches with
    /// repeated and equivalent keys, `removeAll()`, reopening for persistent providers), generated
    /// from the seed, run against the provider and a reference model (a dictionary), comparing
    /// every key an operation touched after each step and `keys()` and `allValues()` regularly.
    /// A mismatch is shrunk to a short sequence that still fails, printed with the seed.
    func modelChecks() throws -> ConformanceReport {
        try groupOnStorage(.model) { checker, _ in
            for run in 0..<options.stress.modelRuns {
                var generator = ConformanceGenerator(seed: options.seed, stream: "model.\(run)")
                let operations = ModelOperation.sequence(options.stress.modelSteps, &generator, reopening: capabilities.contains(.persistent))
                guard let mismatch = runModel(operations, checker) else {
                    checker.check(.modelMatchesReference, true, "run \(run + 1)", expected: "", actual: "")
                    continue
                }
                let shrunk = shrinkModel(operations, checker)
                let final = runModel(shrunk, checker) ?? mismatch
                let steps = shrunk.enumerated().map { "\($0.offset + 1). \($0.element)" }.joined(separator: "; ")
                checker.fail(
                    .modelMatchesReference,
                    "run \(run + 1) of \(options.stress.modelRuns), step \(mismatch.step + 1) of \(operations.count) (\(mismatch.operation)): \(mismatch.what); shrunk to \(shrunk.count) step(s), failing at step \(final.step + 1) (\(final.what)): \(steps)",
                    key: mismatch.key, expected: mismatch.expected, actual: mismatch.actual)
                return
            }
        }
    }

    /// Runs `operations` on fresh storage against the model; the first mismatch, if any.
    func runModel(_ operations: [ModelOperation], _ checker: ConformanceChecker) -> ModelMismatch? {
        guard let storage = try? makeStorage("model") else { return nil }
        defer { removeStorage(storage) }
        var provider: (any DefaultsProvider)?
        do { provider = try openWatched(storage, checker) } catch {
            return ModelMismatch(step: 0, operation: "open", what: "opening failed", key: nil, expected: "a provider", actual: ConformanceText.error(error))
        }
        var model: [String: DefaultsValue] = [:]
        for (step, operation) in operations.enumerated() {
            func mismatch(_ what: String, key: String?, expected: String, actual: String) -> ModelMismatch {
                ModelMismatch(step: step, operation: operation.description, what: what, key: key, expected: expected, actual: actual)
            }
            do {
                switch operation {
                case .set(let key, let value): try provider?.setValue(value, forKey: key)
                case .remove(let key): try provider?.removeValue(forKey: key)
                case .batch(let changes): try provider?.apply(changes)
                case .removeAll: try provider?.removeAll()
                case .reopen:
                    provider = nil
                    provider = try openWatched(storage, checker)
                case .checkAll: break
                }
            } catch {
                return mismatch("the operation threw", key: nil, expected: "no error", actual: ConformanceText.error(error))
            }
            operation.apply(to: &model)
            guard let provider else { return nil }
            for key in operation.touchedKeys {
                do {
                    let read = try provider.value(forKey: key)
                    if !ConformanceExactness.equal(read, model[key]) {
                        return mismatch("a read differs from the model", key: key, expected: ConformanceText.value(model[key]), actual: ConformanceText.value(read))
                    }
                } catch {
                    return mismatch("a read threw", key: key, expected: "no error", actual: ConformanceText.error(error))
                }
            }
            if operation.checksEverything || step % 8 == 7 || step == operations.count - 1 {
                do {
                    let keys = try provider.keys()
                    if !keysMatch(keys, Set(model.keys)) {
                        return mismatch("keys() differs from the model", key: nil, expected: ConformanceText.keys(model.keys), actual: keyListProblems(keys, Set(model.keys)))
                    }
                    let all = try provider.allValues()
                    if !keysMatch(Array(all.keys), Set(model.keys)) {
                        return mismatch("allValues() differs from the model", key: nil, expected: ConformanceText.keys(model.keys), actual: keyListProblems(Array(all.keys), Set(model.keys)))
                    }
                    for (key, value) in model where !ConformanceExactness.equal(all[key], value) {
                        return mismatch("allValues() differs from the model", key: key, expected: ConformanceText.value(value), actual: ConformanceText.value(all[key]))
                    }
                } catch {
                    return mismatch("keys() or allValues() threw", key: nil, expected: "no error", actual: ConformanceText.error(error))
                }
            }
        }
        return nil
    }

    /// The shortest sequence found (removing chunks of operations, halving their size, while
    /// it still fails), within a bounded number of runs.
    func shrinkModel(_ operations: [ModelOperation], _ checker: ConformanceChecker) -> [ModelOperation] {
        var current = operations
        // A failure after step N needs nothing after it.
        if let mismatch = runModel(current, checker) { current = Array(current.prefix(mismatch.step + 1)) }
        var chunk = max(1, current.count / 2)
        var runs = 0
        let deadline = ContinuousClock.now + .seconds(6)
        while chunk >= 1, runs < 120, ContinuousClock.now < deadline {
            var start = 0
            var removedAny = false
            while start < current.count, runs < 120, ContinuousClock.now < deadline {
                var candidate = current
                candidate.removeSubrange(start..<min(start + chunk, candidate.count))
                runs += 1
                if !candidate.isEmpty, let mismatch = runModel(candidate, checker) {
                    current = Array(candidate.prefix(mismatch.step + 1))
                    removedAny = true
                } else {
                    start += chunk
                }
            }
            if !removedAny { chunk /= 2 }
        }
        return current
    }
}

/// Where a run of the model check first differed from the model.
struct ModelMismatch {
    var step: Int
    var operation: String
    var what: String
    var key: String?
    var expected: String
    var actual: String
}

/// One step of the model check.
enum ModelOperation: CustomStringConvertible {
    case set(String, DefaultsValue)
    case remove(String)
    case batch([DefaultsChange])
    case removeAll
    case reopen
    case checkAll

    /// The keys the operations use: prefixes of each other, case, canonical and compatibility
    /// look-alikes, wildcards, a long key, other scripts.
    static let keys = [
        "m.a", "m.A", "m.a.b", "m.ab", "m.caf\u{E9}", "m.cafe\u{301}", "m.\u{FB01}", "m.fi", "m.%", "m._", "m.*", "m. a",
        "m.ключ", "m.🔑", "m." + String(repeating: "k", count: 700),
    ]

    static func sequence(_ count: Int, _ generator: inout ConformanceGenerator, reopening: Bool) -> [ModelOperation] {
        func value() -> DefaultsValue {
            generator.random.chance(0.5) ? .int(Int64.random(in: 0..<4, using: &generator.random)) : generator.value(depth: 2)
        }
        return (0..<count).map { _ in
            let roll = Int.random(in: 0..<100, using: &generator.random)
            switch roll {
            case 0..<38: return .set(generator.random.pick(keys), value())
            case 38..<52: return .remove(generator.random.pick(keys))
            case 52..<80:
                return .batch((0..<Int.random(in: 1...5, using: &generator.random)).map { _ in
                    generator.random.chance(0.7) ? .set(generator.random.pick(keys), value()) : .remove(generator.random.pick(keys))
                })
            case 80..<84: return .removeAll
            case 84..<91 where reopening: return .reopen
            default: return .checkAll
            }
        }
    }

    func apply(to model: inout [String: DefaultsValue]) {
        switch self {
        case .set(let key, let value): model[key] = value
        case .remove(let key): model[key] = nil
        case .batch(let changes): for change in changes { model[change.key] = change.value }
        case .removeAll: model = [:]
        case .reopen, .checkAll: break
        }
    }

    var touchedKeys: [String] {
        switch self {
        case .set(let key, _), .remove(let key): [key]
        case .batch(let changes): changes.map(\.key)
        case .removeAll, .reopen, .checkAll: Self.keys
        }
    }

    var checksEverything: Bool {
        switch self {
        case .removeAll, .reopen, .checkAll: true
        default: false
        }
    }

    var description: String {
        switch self {
        case .set(let key, let value): "set \(ConformanceText.key(key)) = \(ConformanceText.value(value))"
        case .remove(let key): "remove \(ConformanceText.key(key))"
        case .batch(let changes):
            "apply [" + changes.map { change in
                switch change {
                case .set(let key, let value): "set \(ConformanceText.key(key)) = \(ConformanceText.value(value))"
                case .remove(let key): "remove \(ConformanceText.key(key))"
                }
            }.joined(separator: ", ") + "]"
        case .removeAll: "removeAll()"
        case .reopen: "reopen"
        case .checkAll: "check keys() and allValues()"
        }
    }
}
