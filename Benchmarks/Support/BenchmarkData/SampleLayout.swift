import AnyDefaultsCore

/// A Codable settings value of a typical shape, read through the facade in the benchmarks.
public struct SampleLayout: Codable, Sendable, Hashable, DefaultsCodable {
    public var columns: Int
    public var sidebar: Bool
    public var title: String
    public var widths: [Double]

    public init(columns: Int, sidebar: Bool, title: String, widths: [Double]) {
        self.columns = columns
        self.sidebar = sidebar
        self.title = title
        self.widths = widths
    }

    public static let example = SampleLayout(columns: 3, sidebar: true, title: "Main window", widths: [120, 480, 240])
}

/// The values the facade benchmarks read: an int under `count`, a string under `name`, a
/// ``SampleLayout`` under `layout`.
public func facadeSeed() -> [String: DefaultsValue] {
    [
        "count": .int(42),
        "name": .string("a settings value longer than fifteen bytes"),
        "layout": (try? SampleLayout.example.defaultsValue) ?? .dictionary([:]),
    ]
}
