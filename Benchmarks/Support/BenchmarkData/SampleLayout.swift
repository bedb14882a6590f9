import AnyDefaultsCore

/// A Codable settings value of a typical shape, read through the facade in the benchmarks.
public struct SampleLayout: Codable, Sendable, Hashable, DefaultsCodable {
    public var columns: Int
    public var sidebar: Bool
    public var title: String
    public var widths: [Double]

    public static let example = SampleLayout(columns: 3, sidebar: true, title: "Main window", widths: [120, 480, 240])
}

extension DefaultsKeys {
    public static let benchCount = DefaultsKey<Int>("count", default: 0)
    public static let benchName = DefaultsKey<String>("name", default: "")
    public static let benchLayout = DefaultsKey<SampleLayout>(
        "layout", default: SampleLayout(columns: 0, sidebar: false, title: "", widths: []))
}

/// The values the facade benchmarks read, under the keys of ``DefaultsKeys/benchCount``,
/// ``DefaultsKeys/benchName`` and ``DefaultsKeys/benchLayout``.
public func facadeSeed() -> [String: DefaultsValue] {
    [
        "count": .int(42),
        "name": .string("a settings value longer than fifteen bytes"),
        "layout": (try? SampleLayout.example.defaultsValue) ?? .dictionary([:]),
    ]
}
