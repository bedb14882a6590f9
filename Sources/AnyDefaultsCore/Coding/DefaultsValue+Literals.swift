// Literals, so that registration defaults and raw values read naturally:
//
//     defaults.register(defaults: ["volume": 0.5, "name": "guest", "recent": ["a", "b"]])

extension DefaultsValue: ExpressibleByBooleanLiteral {
    public init(booleanLiteral value: Bool) { self = .bool(value) }
}

extension DefaultsValue: ExpressibleByIntegerLiteral {
    public init(integerLiteral value: Int64) { self = .int(value) }
}

extension DefaultsValue: ExpressibleByFloatLiteral {
    public init(floatLiteral value: Double) { self = .double(value) }
}

extension DefaultsValue: ExpressibleByStringLiteral {
    public init(stringLiteral value: String) { self = .string(value) }
}

extension DefaultsValue: ExpressibleByArrayLiteral {
    public init(arrayLiteral elements: DefaultsValue...) { self = .array(elements) }
}

extension DefaultsValue: ExpressibleByDictionaryLiteral {
    /// A later duplicate key replaces an earlier one.
    public init(dictionaryLiteral elements: (String, DefaultsValue)...) {
        self = .dictionary(Dictionary(elements, uniquingKeysWith: { _, last in last }))
    }
}
