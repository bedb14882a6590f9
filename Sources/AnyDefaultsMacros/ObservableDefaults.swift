import Observation

/// Makes a class an observable settings model: each stored `var` lives in a defaults store under
/// a key, and every property is observed on its own.
///
/// ```swift
/// @ObservableDefaults(prefix: "player.")
/// final class PlayerSettings {
///     var volume = 0.5                                   // stored as "player.volume"
///     @SettingKey("server_url") var serverURL = "https://example.com"
///     @MemoryOnly var isScrubbing = false                // observable, kept in memory only
///     @DefaultsIgnored var scratch = 0                   // neither stored nor observed
/// }
///
/// let settings = PlayerSettings()                        // on Defaults.standard
/// let other = try PlayerSettings(store: "sqlite:prefs.sqlite")
/// settings.volume = 0.8
/// ```
///
/// - A stored property reads the store each time (a cached read), so it always shows the
///   current value, whoever wrote it. Reading it inside `withObservationTracking` (or a SwiftUI
///   body) tracks that property alone; a change made anywhere — this model, another model or
///   `Defaults` on the same store, another process where the backend reports it — calls the
///   observers of the properties whose keys changed, and of no other.
/// - The initial value is the default: what the property reads while nothing is stored. An
///   optional property without one defaults to `nil`, and assigning `nil` removes the key. A
///   stored value that cannot be read as the property's type reads as the default and is
///   reported to the store's error handler (the log by default).
/// - Any ``DefaultsSerializable`` type works: numbers, strings, dates, URLs, arrays and
///   dictionaries of them, optionals, `RawRepresentable` enums and `Codable` types that opt in.
///
/// Parameters:
/// - `store`: the store when the initializer is not told another; `Defaults.standard` if left out.
/// - `prefix`: put in front of every key (a string literal).
/// - `observeFirst`: properties are observable only (in memory) unless marked ``DefaultsBacked(_:)``
///   or ``SettingKey(_:)``.
/// - `ignoreExternalChanges`: observers are told only of changes made through this model; reads
///   still show the stored value.
/// - `autoInit`: whether to generate the initializers below (when the class has no initializer of
///   its own). Without them, the model uses the `store`, `prefix` and `ignoreExternalChanges` given here.
///
/// The generated initializers:
///
/// ```swift
/// init(store: Defaults = .standard, prefix: String = <prefix>, ignoreExternalChanges: Bool = <ignoreExternalChanges>)
/// convenience init(store: String, prefix: String = <prefix>, ignoreExternalChanges: Bool = <ignoreExternalChanges>) throws(DefaultsError)
/// convenience init(provider: some DefaultsProvider, prefix: String = <prefix>, ignoreExternalChanges: Bool = <ignoreExternalChanges>)
/// ```
///
/// A model is not `Sendable`: keep it in one isolation domain; for a user interface, mark the class
/// `@MainActor`. Changes arriving on other threads never touch the model's state: they go to the
/// store's Observation registrar, which is `Sendable`.
@attached(member, names: named(_$defaults), named(init))
@attached(memberAttribute)
@attached(extension, conformances: ObservableDefaults)
public macro ObservableDefaults(
    store: Defaults = .standard,
    prefix: String = "",
    observeFirst: Bool = false,
    ignoreExternalChanges: Bool = false,
    autoInit: Bool = true
) = #externalMacro(module: "AnyDefaultsMacrosPlugin", type: "ObservableDefaultsMacro")

/// A class made an observable settings model by the ``ObservableDefaults(store:prefix:observeFirst:ignoreExternalChanges:autoInit:)``
/// macro, which adds this conformance: it is `Observable`, so SwiftUI's `@State` and `@Bindable`
/// accept it.
public protocol ObservableDefaults: AnyObject, Observable {}
