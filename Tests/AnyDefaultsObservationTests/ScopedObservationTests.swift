import AnyDefaults
import Testing
import TestSupport

/// Observing chosen keys of a `scoped()` view reports exactly the changes of those keys under the
/// view's prefix, named without it, in commit order, whether the view or the whole store wrote
/// them: checked against a model over random writes (keys that only look alike — another
/// prefix that starts the same, the prefix twice, no prefix — must stay silent).
@Suite struct ScopedObservationTests {
    @Test(arguments: Backend.allCases)
    func chosenKeysOfAScopeReportExactlyTheirChanges(backend: Backend) async throws {
        let fixture = try backend.fixture()
        defer { fixture.remove() }
        let defaults = try fixture.open()
        let ui = defaults.scoped("ui.")
        let chosen = ["theme", "compact"]
        let observed = Recorder<String>()
        let observation = ui.observe(keys: chosen) { observed.record(Self.describe($0.key, $0.newValue)) }
        defer { observation.cancel() }
        let stream = ui.changes(forKeys: chosen)

        let names = ["theme", "compact", "other"]
        let prefixes = ["ui.", "", "uix.", "ui.ui.", "UI."]
        var random = SeededGenerator(seed: 20_261_126)
        var model: [String: Int] = [:]
        var expected: [String] = []
        for _ in 0..<80 {
            let name = names[Int.random(in: 0..<names.count, using: &random)]
            let prefix = prefixes[Int.random(in: 0..<prefixes.count, using: &random)]
            let key = prefix + name
            // Small values, so that many writes store what is already there (no event).
            let value: Int? = Int.random(in: 0..<5, using: &random) == 0 ? nil : Int.random(in: 0..<3, using: &random)
            let throughView = prefix == "ui." && Bool.random(using: &random)
            switch (value, throughView) {
            case (let value?, true): ui.set(value, forKey: name)
            case (nil, true): ui.removeObject(forKey: name)
            case (let value?, false): defaults.set(value, forKey: key)
            case (nil, false): defaults.removeObject(forKey: key)
            }
            if model[key] != value, prefix == "ui.", chosen.contains(name) {
                expected.append(Self.describe(name, value.map { .int(Int64($0)) }))
            }
            model[key] = value
        }
        settle(defaults)
        #expect(!expected.isEmpty)
        #expect(observed.all == expected)
        #expect(try await first(expected.count, of: stream).map { Self.describe($0.key, $0.newValue) } == expected)
    }

    static func describe(_ key: String, _ value: DefaultsValue?) -> String { "\(key)=\(value.map { "\($0)" } ?? "nil")" }
}
