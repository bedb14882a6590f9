/// Makes a struct the schema of a typed snapshot: each stored `var` is a key of the store (its
/// name after `prefix`, or the key given with ``SettingKey(_:)``), and its initial value is the
/// default. A value of the struct is an immutable snapshot of those keys.
///
/// ```swift
/// @DefaultsSchema(prefix: "audio.")
/// struct Audio {
///     var volume = 0.5                        // "audio.volume"
///     @SettingKey("is_muted") var muted = false
///     var device: String?                     // nil while nothing is stored
/// }
///
/// let audio = defaults.snapshot(Audio.self)             // one consistent read
/// try defaults.write(Audio.self) { $0.volume = 0.8; $0.muted = false }   // one batch
/// for await audio in defaults.snapshots(Audio.self) { mixer.apply(audio) }
/// ```
///
/// The macro adds the ``DefaultsSchema`` conformance: the struct is `Sendable` and `Equatable`
/// (its properties compare with `==` where their type is `Equatable`, else by what they store).
/// The struct keeps its own initializers, so `Audio()` is the snapshot of an empty store.
@attached(
    extension, conformances: DefaultsSchema,
    names: named(init(defaultsSchemaValues:)), named(defaultsSchemaKeys), named(writeDefaultsSchemaChanges(from:to:)), named(==)
)
public macro DefaultsSchema(prefix: String = "") = #externalMacro(module: "AnyDefaultsMacrosPlugin", type: "DefaultsSchemaMacro")

/// A struct whose values are snapshots of some keys of a store; the ``DefaultsSchema(prefix:)``
/// macro writes the conformance. Read one with ``AnyDefaultsCore/Defaults/snapshot(_:)``, write
/// with ``AnyDefaultsCore/Defaults/write(_:_:)``, follow them with
/// ``AnyDefaultsCore/Defaults/snapshots(_:)``.
public protocol DefaultsSchema: Sendable, Equatable {
    /// The keys the schema reads, prefix included (relative to the store's scope).
    static var defaultsSchemaKeys: [String] { get }

    /// The snapshot of `values`: each property the value stored under its key, or else its
    /// default.
    init(defaultsSchemaValues values: DefaultsSchemaValues)

    /// Records in `transaction` the properties that differ from `old`.
    func writeDefaultsSchemaChanges(from old: Self, to transaction: inout DefaultsTransaction)
}
