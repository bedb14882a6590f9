/// How two snapshots of a ``DefaultsSchema`` compare, property by property: with `==` where the
/// type is `Equatable`, else by what the store would hold for each value.
public enum DefaultsSchemaEquality {
    /// Whether `lhs` and `rhs` store the same thing.
    public static func equal<Value: DefaultsSerializable>(_ lhs: Value, _ rhs: Value) -> Bool {
        switch (Result { () throws(DefaultsError) in try lhs.defaultsValue }, Result { () throws(DefaultsError) in try rhs.defaultsValue }) {
        case (.success(let left), .success(let right)): left == right
        default: false
        }
    }

    /// Whether `lhs == rhs`.
    @inlinable
    public static func equal<Value: DefaultsSerializable & Equatable>(_ lhs: Value, _ rhs: Value) -> Bool {
        lhs == rhs
    }
}
