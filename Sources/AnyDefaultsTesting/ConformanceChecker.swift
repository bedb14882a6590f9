import AnyDefaultsCore
import Foundation
import Synchronization

/// Collects the results of one group's checks. Safe to use from the threads of the concurrency
/// checks.
final class ConformanceChecker: Sendable {
    let group: String
    private let state = Mutex<(checks: Int, failures: [ConformanceFailure.Item])>((0, []))
    private let name = Mutex("provider")

    /// The type name of the provider under test, for the failure's headline.
    var providerName: String {
        get { name.withLock { $0 } }
        set { name.withLock { $0 = newValue } }
    }

    init(group: String) { self.group = group }

    var failures: [ConformanceFailure.Item] { state.withLock { $0.failures } }
    var checkCount: Int { state.withLock { $0.checks } }

    /// Records one check; fails it when `passed` is false.
    func check(_ passed: Bool, _ check: String, key: String? = nil, expected: @autoclosure () -> String, actual: @autoclosure () -> String) {
        let item = passed ? nil : ConformanceFailure.Item(group: group, check: check, key: key, expected: expected(), actual: actual())
        state.withLock { state in
            state.checks += 1
            if let item { state.failures.append(item) }
        }
    }

    func fail(_ check: String, key: String? = nil, expected: String, actual: String) {
        self.check(false, check, key: key, expected: expected, actual: actual)
    }

    /// Checks that `actual` is exactly `expected` (``DefaultsValue`` equality: bit-exact doubles,
    /// NaN equal to NaN, no conversion between cases).
    func expectValue(_ actual: DefaultsValue?, _ expected: DefaultsValue?, _ check: String, key: String) {
        self.check(actual == expected, check, key: key, expected: describe(expected), actual: describe(actual))
    }

    /// Runs `body`; a thrown error fails the check instead of ending the group.
    @discardableResult
    func attempt<T>(_ check: String, key: String? = nil, _ body: () throws -> T) -> T? {
        do {
            return try body()
        } catch {
            fail(check, key: key, expected: "no error", actual: "threw \(error)")
            return nil
        }
    }

    /// Runs `body`, which must throw a ``DefaultsError`` with `code`.
    func expectError(_ code: DefaultsError.Code, _ check: String, key: String? = nil, _ body: () throws -> Void) {
        do {
            try body()
            fail(check, key: key, expected: "a DefaultsError with code \(code)", actual: "no error")
        } catch let error as DefaultsError {
            self.check(
                error.code == code && !error.message.isEmpty && !error.backend.isEmpty, check, key: key,
                expected: "a DefaultsError with code \(code), a message and a backend name",
                actual: "code \(error.code), message \(error.message.debugDescription), backend \(error.backend.debugDescription)")
        } catch {
            fail(check, key: key, expected: "a DefaultsError with code \(code)", actual: "\(type(of: error)): \(error)")
        }
    }
}

/// A precise description of a value for failure messages: doubles and dates with their bits,
/// long strings and data shortened.
func describe(_ value: DefaultsValue?) -> String {
    guard let value else { return "nil (absent)" }
    return describe(value, depth: 0)
}

private func describe(_ value: DefaultsValue, depth: Int) -> String {
    func bits(_ d: Double) -> String {
        d.isNaN ? "nan" : "\(d) [0x\(String(d.bitPattern, radix: 16))]"
    }
    if depth > 4 { return "…" }
    switch value {
    case .bool(let v): return ".bool(\(v))"
    case .int(let v): return ".int(\(v))"
    case .double(let v): return ".double(\(bits(v)))"
    case .date(let v): return ".date(\(bits(v.timeIntervalSinceReferenceDate)))"
    case .string(let v):
        let shown = v.count > 60 ? String(v.prefix(60)).debugDescription + "… (\(v.utf8.count) UTF-8 bytes)" : v.debugDescription
        return ".string(\(shown))"
    case .data(let v):
        let hex = v.prefix(16).map { String(format: "%02x", $0) }.joined()
        return ".data(\(v.count) bytes: \(hex)\(v.count > 16 ? "…" : ""))"
    case .array(let items):
        let shown = items.prefix(6).map { describe($0, depth: depth + 1) }.joined(separator: ", ")
        return ".array([\(shown)\(items.count > 6 ? ", … \(items.count) in all" : "")])"
    case .dictionary(let items):
        let shown = items.sorted { $0.key < $1.key }.prefix(6)
            .map { "\($0.key.debugDescription): \(describe($0.value, depth: depth + 1))" }.joined(separator: ", ")
        return ".dictionary([\(shown)\(items.count > 6 ? ", … \(items.count) in all" : "")])"
    }
}
