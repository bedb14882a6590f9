// Marks on the properties of an @ObservableDefaults class or a @DefaultsSchema struct. They
// expand to nothing: the macro on the type reads them.

/// Stores the property in the defaults store (and makes it observable), under `key` if given,
/// else under its name, after the model's prefix. Needed in `observeFirst` mode, where
/// properties are observable only unless marked; elsewhere it only names the key.
///
/// ```swift
/// @ObservableDefaults(observeFirst: true)
/// final class Editor {
///     var selection = 0                      // observable only
///     @DefaultsBacked var fontSize = 13.0    // stored as "fontSize"
///     @DefaultsBacked("theme_name") var theme = "light"
/// }
/// ```
@attached(peer)
public macro DefaultsBacked(_ key: String? = nil) = #externalMacro(module: "AnyDefaultsMacrosPlugin", type: "PropertyMarkerMacro")

/// Stores the property under `key` (after the model's or schema's prefix) instead of its name.
///
/// ```swift
/// @SettingKey("first_name") var name = "guest"
/// ```
@attached(peer)
public macro SettingKey(_ key: String) = #externalMacro(module: "AnyDefaultsMacrosPlugin", type: "PropertyMarkerMacro")

/// Keeps the property in memory, not in the store, and makes it observable like a property of an
/// `@Observable` class.
///
/// ```swift
/// @MemoryOnly var isEditing = false
/// ```
@attached(peer)
public macro MemoryOnly() = #externalMacro(module: "AnyDefaultsMacrosPlugin", type: "PropertyMarkerMacro")

/// Leaves the property alone: neither stored nor observed. (`@ObservationIgnored` does the same.)
///
/// ```swift
/// @DefaultsIgnored var cache: [String: Int] = [:]
/// ```
@attached(peer)
public macro DefaultsIgnored() = #externalMacro(module: "AnyDefaultsMacrosPlugin", type: "PropertyMarkerMacro")

// What the macros put on each property; not for use by hand.

/// A property of an `@ObservableDefaults` class stored under `key` (after the prefix).
@attached(accessor, names: named(init), named(get), named(set))
@attached(peer, names: prefixed(_$))
public macro _DefaultsStoredProperty(_ key: String) = #externalMacro(module: "AnyDefaultsMacrosPlugin", type: "StoredPropertyMacro")

/// A property of an `@ObservableDefaults` class kept in memory and observable.
@attached(accessor, names: named(init), named(get), named(set))
@attached(peer, names: prefixed(_$))
public macro _DefaultsMemoryProperty() = #externalMacro(module: "AnyDefaultsMacrosPlugin", type: "MemoryPropertyMacro")
