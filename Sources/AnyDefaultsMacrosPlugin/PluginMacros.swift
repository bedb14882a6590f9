import AnyDefaultsMacrosImplementation
import SwiftSyntaxMacros

// The macros under the names the compiler asks this plug-in for. Each expands as the type of the
// same name in AnyDefaultsMacrosImplementation (see `ForwardingMacro`).

/// `@ObservableDefaults`.
public enum ObservableDefaultsMacro: ForwardingMacro, MemberMacro, MemberAttributeMacro, ExtensionMacro {
    public typealias Implementation = AnyDefaultsMacrosImplementation.ObservableDefaultsMacro
}

/// `@DefaultsSchema`.
public enum DefaultsSchemaMacro: ForwardingMacro, ExtensionMacro {
    public typealias Implementation = AnyDefaultsMacrosImplementation.DefaultsSchemaMacro
}

/// The accessors and storage of a property backed by the store.
public enum StoredPropertyMacro: ForwardingMacro, AccessorMacro, PeerMacro {
    public typealias Implementation = AnyDefaultsMacrosImplementation.StoredPropertyMacro
}

/// The accessors and storage of an observable, memory-only property.
public enum MemoryPropertyMacro: ForwardingMacro, AccessorMacro, PeerMacro {
    public typealias Implementation = AnyDefaultsMacrosImplementation.MemoryPropertyMacro
}

/// `@DefaultsBacked`, `@SettingKey`, `@MemoryOnly`, `@DefaultsIgnored`: markers read by
/// `@ObservableDefaults`.
public enum PropertyMarkerMacro: ForwardingMacro, PeerMacro {
    public typealias Implementation = AnyDefaultsMacrosImplementation.PropertyMarkerMacro
}
