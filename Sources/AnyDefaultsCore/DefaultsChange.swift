/// One change in a batch handed to ``DefaultsProvider/apply(_:)``.
///
/// ```swift
/// try store.apply([.set("ui.theme", .string("dark")), .remove("ui.legacyTheme")])
/// ```
public enum DefaultsChange: Sendable, Hashable {
    /// Store `value` under `key`, replacing what was there.
    case set(String, DefaultsValue)
    /// Remove `key`; removing an absent key is no error.
    case remove(String)

    /// The key this change touches.
    public var key: String {
        switch self {
        case .set(let key, _), .remove(let key): key
        }
    }

    /// The value this change stores, or `nil` for a removal.
    public var value: DefaultsValue? {
        switch self {
        case .set(_, let value): value
        case .remove: nil
        }
    }
}
