import AnyDefaultsCore
import AnyDefaultsUserDefaults
import Foundation
import Synchronization

/// A uniquely named suite in this process's real preferences directory, removed afterwards with
/// everything the provider may leave next to it (moved-aside damaged files), so that tests never
/// touch settings they did not create.
struct TestSuite {
    let name = "anydefaults-test-\(UUID().uuidString)"

    /// Opens a provider on the suite.
    func provider(_ options: UserDefaultsProvider.Options = .init()) throws -> UserDefaultsProvider {
        try UserDefaultsProvider(suiteName: name, options: options)
    }

    /// A plain Foundation view of the suite.
    var plain: UserDefaults? { UserDefaults(suiteName: name) }

    /// The suite's file, where the provider writes it itself (Linux).
    var fileURL: URL? { try? UserDefaultsProvider.propertyListURL(forSuite: name) }

    /// Files next to the suite file that belong to this suite (its damaged copies).
    var leftovers: [URL] {
        guard let fileURL else { return [] }
        let directory = fileURL.deletingLastPathComponent()
        let names = (try? FileManager.default.contentsOfDirectory(atPath: directory.path)) ?? []
        return names.filter { $0.hasPrefix(name + ".plist") || $0.hasPrefix("." + name + ".plist") }
            .map { directory.appendingPathComponent($0) }
    }

    func remove() {
        try? UserDefaultsProvider.removeSuite(named: name)
        for url in leftovers { try? FileManager.default.removeItem(at: url) }
        plain?.synchronize()
    }
}

/// Runs `body` with a fresh suite and removes the suite afterwards, also when `body` throws.
func withTestSuite<T>(_ body: (TestSuite) throws -> T) throws -> T {
    let suite = TestSuite()
    defer { suite.remove() }
    return try body(suite)
}

/// Values that exercise every case of `DefaultsValue` at its edges.
enum Samples {
    static let values: [String: DefaultsValue] = [
        "bool.true": .bool(true),
        "bool.false": .bool(false),
        "int.zero": .int(0),
        "int.one": .int(1),
        "int.min": .int(.min),
        "int.max": .int(.max),
        "double.one": .double(1),
        "double.negativeZero": .double(-0.0),
        "double.infinity": .double(.infinity),
        "double.negativeInfinity": .double(-.infinity),
        "double.nan": .double(.nan),
        "double.subnormal": .double(.leastNonzeroMagnitude),
        "double.max": .double(.greatestFiniteMagnitude),
        "double.tenth": .double(0.1),
        "date.fraction": .date(Date(timeIntervalSinceReferenceDate: 1.25)),
        "date.negativeFraction": .date(Date(timeIntervalSinceReferenceDate: -0.75)),
        "date.negativeZero": .date(Date(timeIntervalSinceReferenceDate: -0.0)),
        "date.distantFuture": .date(.distantFuture),
        "string.empty": .string(""),
        "string.awkward": .string("a\u{0}b\r\nc\u{1}\u{FFFE} <&>\"' é e\u{301} 😀"),
        "data.empty": .data(Data()),
        "data.bytes": .data(Data((0...255).map { UInt8($0) })),
        "array.empty": .array([]),
        "dictionary.empty": .dictionary([:]),
        "nested": .dictionary([
            "mixed": .array([.int(1), .double(1), .bool(true), .string("1")]),
            "ключ": .dictionary(["inner": .array([.array([]), .dictionary([:])])]),
        ]),
        "ключ 🔑": .string("a Unicode key"),
        String(repeating: "k", count: 1100): .int(1100),
    ]
}
