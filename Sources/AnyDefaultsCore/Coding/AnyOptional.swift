/// Lets generic code recognise `Optional` without knowing its wrapped type: a `nil` is stored as
/// an absent key, so writers remove the key and readers of an absent key get `nil`.
protocol AnyOptional {
    /// `nil` of this optional type.
    static var absent: Self { get }
    /// Whether this value is `nil`.
    var isAbsent: Bool { get }
}

extension Optional: AnyOptional {
    static var absent: Self { .none }

    var isAbsent: Bool {
        if case .none = self { return true }
        return false
    }
}

/// `nil` as a `T`, when `T` is an optional type.
@inline(__always)
func absentValue<T>(of type: T.Type) -> T? {
    (type as? any AnyOptional.Type)?.absent as? T
}

/// Whether `value` is an optional holding `nil`.
@inline(__always)
func isAbsent<T>(_ value: T) -> Bool {
    // The type first: a metatype check is cached by the runtime, while casting the value boxes
    // it, and most values written are not optionals.
    guard T.self is any AnyOptional.Type else { return false }
    return (value as? any AnyOptional)?.isAbsent ?? false
}
