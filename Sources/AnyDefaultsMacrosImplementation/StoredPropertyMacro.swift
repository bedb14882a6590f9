import SwiftSyntax
import SwiftSyntaxMacros

/// `@_DefaultsStoredProperty(key)`, which `@ObservableDefaults` puts on each stored property: the
/// property becomes accessors over the model's storage, and its initial value the default of a
/// peer `_$name` (an `ObservableDefaultsProperty`).
///
/// ```swift
/// var volume: Double = 0.5 {
///     @storageRestrictions(initializes: _$volume)
///     init(initialValue) { _$volume = .init(name: "volume", defaultValue: initialValue) }
///     get { _$defaults.value(of: _$volume, in: self, keyPath: \.volume) }
///     set { _$defaults.setValue(newValue, of: _$volume, in: self, keyPath: \.volume) }
/// }
/// private let _$volume: AnyDefaultsMacros.ObservableDefaultsProperty<Double>
/// ```
///
/// Without a type annotation the peer's type comes from a copy of the initial value, which is
/// then evaluated twice (as `@Observable` does); the property's init accessor has nothing left to
/// set.
public enum StoredPropertyMacro {
    static let propertyType = "AnyDefaultsMacros.ObservableDefaultsProperty"

    struct Parts {
        let name: String
        let key: ExprSyntax
        let type: TypeSyntax?
        let initializer: ExprSyntax?
        var peer: String { "_$" + name }
    }

    static func parts(_ node: AttributeSyntax, _ declaration: some DeclSyntaxProtocol) -> Parts? {
        guard let variable = declaration.as(VariableDeclSyntax.self), let binding = variable.bindings.first,
              let name = binding.pattern.as(IdentifierPatternSyntax.self)?.identifier.trimmedDescription,
              case .argumentList(let arguments) = node.arguments, let key = arguments.first?.expression
        else { return nil }
        return Parts(name: name, key: key, type: binding.typeAnnotation?.type.trimmed, initializer: binding.initializer?.value.trimmed)
    }
}

extension StoredPropertyMacro: AccessorMacro {
    public static func expansion(
        of node: AttributeSyntax, providingAccessorsOf declaration: some DeclSyntaxProtocol, in context: some MacroExpansionContext
    ) throws -> [AccessorDeclSyntax] {
        guard let parts = parts(node, declaration) else { return [] }
        var accessors: [AccessorDeclSyntax] = []
        if parts.initializer != nil {
            if parts.type != nil {
                accessors.append(
                    """
                    @storageRestrictions(initializes: \(raw: parts.peer))
                    init(initialValue) {
                        \(raw: parts.peer) = \(raw: propertyType)(name: \(parts.key), defaultValue: initialValue)
                    }
                    """)
            } else {
                accessors.append("init(initialValue) {}")
            }
        }
        accessors.append(
            """
            get {
                \(raw: ObservableDefaultsMacro.storage).value(of: \(raw: parts.peer), in: self, keyPath: \\.\(raw: parts.name))
            }
            """)
        accessors.append(
            """
            set {
                \(raw: ObservableDefaultsMacro.storage).setValue(newValue, of: \(raw: parts.peer), in: self, keyPath: \\.\(raw: parts.name))
            }
            """)
        return accessors
    }
}

extension StoredPropertyMacro: PeerMacro {
    public static func expansion(
        of node: AttributeSyntax, providingPeersOf declaration: some DeclSyntaxProtocol, in context: some MacroExpansionContext
    ) throws -> [DeclSyntax] {
        guard let parts = parts(node, declaration) else { return [] }
        switch (parts.type, parts.initializer) {
        case (let type?, _?):
            return ["private let \(raw: parts.peer): \(raw: propertyType)<\(type)>"]
        case (nil, let initializer?):
            return ["private let \(raw: parts.peer) = \(raw: propertyType)(name: \(parts.key), defaultValue: \(initializer))"]
        case (let type?, nil):
            return ["private let \(raw: parts.peer) = \(raw: propertyType)<\(type)>(name: \(parts.key), defaultValue: nil)"]
        case (nil, nil):
            return []
        }
    }
}
