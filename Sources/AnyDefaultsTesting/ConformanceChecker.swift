import AnyDefaultsCore
import Foundation
import Synchronization

/// Collects the results of one group's checks. Safe to use from the threads of the concurrency
/// checks.
///
/// Every error it catches is also searched for the group's secret (see ``secret``): no error may
/// show any part of a stored or rejected value.
final class ConformanceChecker: Sendable {
    let group: DefaultsConformanceSuite.Group
    let seed: UInt64
    let timeout: Duration
    /// A random token that the group stores inside values wherever it provokes errors; no error
    /// may contain any part of it.
    let secret: String
    private let fragments: [String]
    private let state = Mutex<(checks: Int, failures: [ConformanceFailure.Item], abandoned: Bool)>((0, [], false))
    private let name = Mutex("provider")
    /// The calls into the providers this group opened that have not returned yet.
    let calls = ConformanceCallWatch()

    init(group: DefaultsConformanceSuite.Group, seed: UInt64, timeout: Duration) {
        self.group = group
        self.seed = seed
        self.timeout = timeout
        var random = ConformanceRandom(seed: seed, stream: "secret.\(group)")
        let alphabet = Array("ABCDEFGHJKLMNPQRSTUVWXYZabcdefghijkmnopqrstuvwxyz23456789")
        let secret = String((0..<16).map { _ in random.pick(alphabet) })
        self.secret = secret
        fragments = Self.fragments(of: secret)
    }

    /// The parts of `secret` that must never appear in an error: every run of 6 of its
    /// characters, and runs of its bytes in hexadecimal and base64, as a provider might show data.
    private static func fragments(of secret: String) -> [String] {
        func windows(_ text: String, _ length: Int) -> [String] {
            let characters = Array(text)
            guard characters.count >= length else { return [text] }
            return (0...(characters.count - length)).map { String(characters[$0..<($0 + length)]) }
        }
        let bytes = Data(secret.utf8)
        let hex = bytes.map { String(format: "%02x", $0) }.joined()
        return windows(secret, 6) + windows(hex, 12) + windows(hex.uppercased(), 12) + windows(bytes.base64EncodedString(), 8)
    }

    /// The type name of the provider under test, for the failure's headline.
    var providerName: String {
        get { name.withLock { $0 } }
        set { name.withLock { $0 = newValue } }
    }

    var failures: [ConformanceFailure.Item] { state.withLock { $0.failures } }
    var checkCount: Int { state.withLock { $0.checks } }

    /// Whether a call hung: the provider may hold its locks forever, so the group stops there.
    var isAbandoned: Bool { state.withLock { $0.abandoned } }

    /// Records one check; fails it when `passed` is false.
    func check(
        _ id: ConformanceCheck, _ passed: Bool, _ detail: String, key: String? = nil,
        expected: @autoclosure () -> String, actual: @autoclosure () -> String
    ) {
        let item = passed
            ? nil
            : ConformanceFailure.Item(id: id, group: group.rawValue, check: detail, key: key, expected: expected(), actual: actual())
        state.withLock { state in
            state.checks += 1
            if let item { state.failures.append(item) }
        }
    }

    func fail(_ id: ConformanceCheck, _ detail: String, key: String? = nil, expected: String, actual: String) {
        check(id, false, detail, key: key, expected: expected, actual: actual)
    }

    /// Checks that `actual` is exactly `expected`: ``DefaultsValue`` equality, with strings and
    /// dictionary keys compared by their Unicode scalars. A mismatch shows where the values differ.
    func expectValue(_ id: ConformanceCheck, _ actual: DefaultsValue?, _ expected: DefaultsValue?, _ detail: String, key: String) {
        let equal = ConformanceExactness.equal(actual, expected)
        check(id, equal, detail, key: key, expected: ConformanceText.value(expected), actual: {
            let shown = ConformanceText.value(actual)
            guard case .some = actual, case .some = expected,
                let difference = ConformanceText.firstDifference(actual, expected)
            else { return shown }
            return "\(shown); they differ \(difference)"
        }())
    }

    /// Runs `body`; a thrown error fails the check instead of ending the group.
    @discardableResult
    func attempt<T>(_ id: ConformanceCheck, _ detail: String, key: String? = nil, _ body: () throws -> T) -> T? {
        do {
            return try body()
        } catch {
            inspect(error, during: detail, key: key)
            fail(id, detail, key: key, expected: "no error", actual: "threw \(ConformanceText.error(error))")
            return nil
        }
    }

    /// Runs `body`, which must throw a ``DefaultsError`` with `code`, a message and a backend name;
    /// the `DefaultsError` it threw, if any.
    @discardableResult
    func expectError(_ id: ConformanceCheck, _ code: DefaultsError.Code, _ detail: String, key: String? = nil, _ body: () throws -> Void) -> DefaultsError? {
        do {
            try body()
            fail(id, detail, key: key, expected: "a DefaultsError with code \(code)", actual: "no error")
            return nil
        } catch let error as DefaultsError {
            inspect(error, during: detail, key: key)
            check(
                id, error.code == code && !error.message.isEmpty && !error.backend.isEmpty, detail, key: key,
                expected: "a DefaultsError with code \(code), a message and a backend name",
                actual: "code \(error.code), message \(ConformanceText.literal(error.message)), backend \(ConformanceText.literal(error.backend))")
            return error
        } catch {
            inspect(error, during: detail, key: key)
            fail(id, detail, key: key, expected: "a DefaultsError with code \(code)", actual: ConformanceText.error(error))
            return nil
        }
    }

    /// Fails ``ConformanceCheck/errorsNoValueInMessage`` if `error` (its description, message,
    /// reflection or any cause) shows any part of the secret.
    func inspect(_ error: any Error, during detail: String, key: String?) {
        var texts = ["\(error)", String(reflecting: error)]
        var cause: (any Error)? = error
        var depth = 0
        while let current = cause, depth < 8 {
            if let defaults = current as? DefaultsError {
                texts.append(defaults.message)
                cause = defaults.cause
                if let next = defaults.cause { texts.append("\(next)"); texts.append(String(reflecting: next)) }
            } else {
                texts.append((current as NSError).localizedDescription)
                cause = nil
            }
            depth += 1
        }
        let shown = texts.joined(separator: "\n")
        if let fragment = fragments.first(where: { shown.contains($0) }) {
            fail(
                .errorsNoValueInMessage, "an error of \(detail) shows a stored or rejected value", key: key,
                expected: "no part of the value \(ConformanceText.literal(secret)) in the error",
                actual: "\(ConformanceText.literal(fragment)) in \(ConformanceText.literal(shown))")
        }
    }

    /// Fails ``ConformanceCheck/suiteCompleted`` for a call that hung, and stops the group.
    func abandon(_ detail: String, key: String?, expected: String, actual: String) {
        fail(.suiteCompleted, detail, key: key, expected: expected, actual: actual)
        state.withLock { $0.abandoned = true }
    }

    /// Runs `body` on a thread of its own and waits at most the suite's timeout. If it does not
    /// return, fails `id` and abandons the group (the provider may hold its locks for good).
    @discardableResult
    func withTimeout(_ id: ConformanceCheck, _ detail: String, key: String? = nil, stackSize: Int? = nil, _ body: @escaping @Sendable () -> Void) -> Bool {
        let done = DispatchSemaphore(value: 0)
        let thread = Thread {
            body()
            done.signal()
        }
        if let stackSize { thread.stackSize = stackSize }
        thread.start()
        if done.wait(timeout: .now() + timeout.seconds) == .success { return true }
        fail(id, detail, key: key, expected: "the call returns within \(timeout)", actual: "it hung (a deadlock?); the group stops here")
        state.withLock { $0.abandoned = true }
        return false
    }
}

extension Duration {
    /// The duration in seconds, as a `Double`.
    var seconds: Double { inSeconds }
}

extension ConformanceText {
    /// An error for a message: a `DefaultsError` with its code, others with their type.
    static func error(_ error: any Error) -> String {
        if let error = error as? DefaultsError { return "DefaultsError \(error.code): \(error)" }
        return "\(type(of: error)): \(error)"
    }
}
