// Collections, optionals and raw-value enums: stored through the bridge of their elements.

/// Stored as `.array`; an element that cannot be read fails the whole read, naming its index.
extension Array: DefaultsSerializable where Element: DefaultsSerializable {
    public init(defaultsValue: DefaultsValue) throws(DefaultsError) {
        guard case .array(let items) = defaultsValue else {
            throw .typeMismatch(expected: Self.self, found: defaultsValue)
        }
        self = try Self.elements(items)
    }

    static func elements(_ items: [DefaultsValue]) throws(DefaultsError) -> [Element] {
        var result: [Element] = []
        result.reserveCapacity(items.count)
        for (index, item) in items.enumerated() {
            do {
                result.append(try Element(defaultsValue: item))
            } catch {
                throw error.inside("[\(index)]")
            }
        }
        return result
    }

    /// - Throws: ``DefaultsError/Code-swift.struct/encodingFailed`` for a `nil` element: a
    ///   store has no null value.
    public var defaultsValue: DefaultsValue {
        get throws(DefaultsError) { .array(try Self.stored(self)) }
    }

    static func stored(_ elements: some Sequence<Element>) throws(DefaultsError) -> [DefaultsValue] {
        var result: [DefaultsValue] = []
        result.reserveCapacity(elements.underestimatedCount)
        for (index, element) in elements.enumerated() {
            if isAbsent(element) {
                throw DefaultsError(.encodingFailed, "Cannot encode \(Self.self) at [\(index)]: an array cannot hold nil.",
                                    backend: bridgeBackend)
            }
            do {
                result.append(try element.defaultsValue)
            } catch {
                throw error.inside("[\(index)]")
            }
        }
        return result
    }

    public static var cachesDecodedValue: Bool { true }
}

/// Stored as an `.array` in one fixed order (whatever the set's iteration order, so equal sets
/// store equal values); duplicates in the stored array collapse.
extension Set: DefaultsSerializable where Element: DefaultsSerializable {
    public init(defaultsValue: DefaultsValue) throws(DefaultsError) {
        guard case .array(let items) = defaultsValue else {
            throw .typeMismatch(expected: Self.self, found: defaultsValue)
        }
        self = Set(try [Element].elements(items))
    }

    public var defaultsValue: DefaultsValue {
        get throws(DefaultsError) { .array(try [Element].stored(self).sorted { $0.storagePrecedes($1) }) }
    }

    public static var cachesDecodedValue: Bool { true }
}

/// Stored as `.dictionary`; a `nil` value is left out, as an absent entry.
extension Dictionary: DefaultsSerializable where Key == String, Value: DefaultsSerializable {
    public init(defaultsValue: DefaultsValue) throws(DefaultsError) {
        guard case .dictionary(let entries) = defaultsValue else {
            throw .typeMismatch(expected: Self.self, found: defaultsValue)
        }
        var result: [String: Value] = [:]
        result.reserveCapacity(entries.count)
        for (key, entry) in entries {
            do {
                result[key] = try Value(defaultsValue: entry)
            } catch {
                throw error.inside(key)
            }
        }
        self = result
    }

    public var defaultsValue: DefaultsValue {
        get throws(DefaultsError) {
            var result: [String: DefaultsValue] = [:]
            result.reserveCapacity(count)
            for (key, value) in self where !isAbsent(value) {
                do {
                    result[key] = try value.defaultsValue
                } catch {
                    throw error.inside(key)
                }
            }
            return .dictionary(result)
        }
    }

    public static var cachesDecodedValue: Bool { true }
}

/// `nil` is stored as an absent key: setting `nil` removes the key, and an absent key reads as
/// the key's default (`nil` unless the key says otherwise).
extension Optional: DefaultsSerializable where Wrapped: DefaultsSerializable {
    public init(defaultsValue: DefaultsValue) throws(DefaultsError) {
        self = .some(try Wrapped(defaultsValue: defaultsValue))
    }

    /// The wrapped value's stored form.
    ///
    /// - Throws: ``DefaultsError/Code-swift.struct/encodingFailed`` for `nil`, which has no
    ///   stored form; ``Defaults`` removes the key instead of asking.
    public var defaultsValue: DefaultsValue {
        get throws(DefaultsError) {
            guard let self else {
                throw DefaultsError(.encodingFailed, "Cannot encode \(Self.self) at the top level: nil has no stored form.",
                                    backend: bridgeBackend)
            }
            return try self.defaultsValue
        }
    }

    public static var cachesDecodedValue: Bool { Wrapped.cachesDecodedValue }
}

/// Enums with a raw value opt in with a bare conformance and are stored as their raw value:
///
/// ```swift
/// enum Theme: String, DefaultsSerializable { case light, dark }
/// ```
///
/// A stored raw value that names no case is a ``DefaultsError/Code-swift.struct/typeMismatch``.
extension DefaultsSerializable where Self: RawRepresentable, RawValue: DefaultsSerializable {
    public init(defaultsValue: DefaultsValue) throws(DefaultsError) {
        guard let value = Self(rawValue: try RawValue(defaultsValue: defaultsValue)) else {
            throw DefaultsError(.typeMismatch, "Cannot read \(Self.self) at the top level: the stored raw value names no case.",
                                backend: bridgeBackend)
        }
        self = value
    }

    public var defaultsValue: DefaultsValue {
        get throws(DefaultsError) { try rawValue.defaultsValue }
    }
}
