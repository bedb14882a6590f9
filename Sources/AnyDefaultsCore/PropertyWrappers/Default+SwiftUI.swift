#if canImport(SwiftUI)
import SwiftUI

// SwiftUI bindings to stored settings (Apple platforms). A view that reads a setting through a
// binding, a `@Default` property or a model property is updated when that key changes, because
// those reads take part in Observation; the binding adds the way back, for controls.

extension Default {
    /// A binding to this property, for SwiftUI controls: reading it reads the store, setting it
    /// stores the value.
    ///
    /// ```swift
    /// struct SoundSettingsView: View {
    ///     @Default("muted") var muted = false
    ///
    ///     var body: some View {
    ///         Toggle("Muted", isOn: $muted.binding)
    ///     }
    /// }
    /// ```
    ///
    /// For a ``DefaultsModel`` (or an `@ObservableDefaults` class), SwiftUI's own bindings work:
    /// `@Bindable var settings: PlayerSettings` (or `@State`), then `Toggle("Muted", isOn: $settings.muted)`.
    public var binding: Binding<Value> {
        Binding(get: { wrappedValue }, set: { wrappedValue = $0 })
    }
}

extension Defaults {
    /// A binding to the value of `key` in this store, for SwiftUI controls.
    ///
    /// ```swift
    /// Slider(value: defaults.binding(.volume), in: 0...1)
    /// ```
    public func binding<Value>(_ key: DefaultsKey<Value>) -> Binding<Value> {
        Binding(get: { self[key] }, set: { self[key] = $0 })
    }
}
#endif
