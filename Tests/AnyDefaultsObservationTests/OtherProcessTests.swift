import AnyDefaults
import Foundation
import TestSupport
import Testing

/// A change made by another process reaches streams, Observation and models, on a backend that
/// reports such changes (the JSON file backend watches its file).
@Suite(.ownThreads) struct OtherProcessTests {
    private static let count = DefaultsKey<Int>("player.count", default: 0)

    @Test func aWriteByAnotherProcessReachesThisOne() async throws {
        try await withTemporaryDirectory { directory in
            let path = directory.path("settings.json")
            let defaults = Defaults(try JSONFileProvider(path: path))
            #expect(defaults.provider.capabilities.contains(.externalChanges))
            defaults[Self.count] = 1
            let model = PlayerCounter(store: defaults, prefix: "player.")
            let tracked = track { _ = defaults[Self.count] }
            let modelTracked = track { _ = model.count }
            let untouched = track { _ = defaults[.volume] }
            let values = defaults.values(of: Self.count)

            let result = try ChildProcess.run("TestChild", ["apply", "json:" + path, "player.count=7"])
            #expect(result.status == 0, "\(result.standardError)")

            #expect(try await first(2, of: values) == [1, 7])
            #expect(await eventually { tracked.count == 1 && modelTracked.count == 1 })
            #expect(defaults[Self.count] == 7)
            #expect(model.count == 7)
            #expect(untouched.count == 0)
        }
    }
}

final class PlayerCounter: DefaultsModel {
    @Setting("count") var count = 0
}

