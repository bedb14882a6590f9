/// Something that names a defaults key: a `String`, or an enum of your key names.
///
/// Every method of ``Defaults`` that takes a key by name accepts one, so key names can live in
/// one place and typos become compile errors:
///
/// ```swift
/// enum SettingsKey: String, DefaultsKeyName {
///     case username = "user.name"
///     case launchCount
/// }
///
/// defaults.set("ada", forKey: SettingsKey.username)
/// let launches = defaults.integer(forKey: SettingsKey.launchCount)
/// let name = DefaultsKey<String>(SettingsKey.username, default: "guest")
/// ```
public protocol DefaultsKeyName: Sendable {
    /// The key as stored.
    var defaultsKeyName: String { get }
}

extension DefaultsKeyName where Self: RawRepresentable, RawValue == String {
    public var defaultsKeyName: String { rawValue }
}

extension String: DefaultsKeyName {
    public var defaultsKeyName: String { self }
}
