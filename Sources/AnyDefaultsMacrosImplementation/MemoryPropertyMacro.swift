import SwiftSyntax
import SwiftSyntaxMacros

/// `@_DefaultsMemoryProperty`, which `@ObservableDefaults` puts on each memory-only property: the
/// value moves to a private peer `_$name`, and the property becomes accessors that tell the
/// model's registrar, as `@Observable` does.
///
/// ```swift
/// var isEditing = false {
///     @storageRestrictions(initializes: _$isEditing)
///     init(initialValue) { _$isEditing = initialValue }
///     get { _$defaults.access(self, keyPath: \.isEditing); return _$isEditing }
///     set { _$defaults.withMutation(of: self, keyPath: \.isEditing) { _$isEditing = newValue } }
/// }
/// private var _$isEditing = false
/// ```
public enum MemoryPropertyMacro {}

extension MemoryPropertyMacro: AccessorMacro {
    public static func expansion(
        of node: AttributeSyntax, providingAccessorsOf declaration: some DeclSyntaxProtocol, in context: some MacroExpansionContext
    ) throws -> [AccessorDeclSyntax] {
        guard let variable = declaration.as(VariableDeclSyntax.self),
              let name = variable.bindings.first?.pattern.as(IdentifierPatternSyntax.self)?.identifier.trimmedDescription
        else { return [] }
        let storage = ObservableDefaultsMacro.storage
        return [
            """
            @storageRestrictions(initializes: _$\(raw: name))
            init(initialValue) {
                _$\(raw: name) = initialValue
            }
            """,
            """
            get {
                \(raw: storage).access(self, keyPath: \\.\(raw: name))
                return _$\(raw: name)
            }
            """,
            """
            set {
                \(raw: storage).withMutation(of: self, keyPath: \\.\(raw: name)) {
                    _$\(raw: name) = newValue
                }
            }
            """,
        ]
    }
}

extension MemoryPropertyMacro: PeerMacro {
    public static func expansion(
        of node: AttributeSyntax, providingPeersOf declaration: some DeclSyntaxProtocol, in context: some MacroExpansionContext
    ) throws -> [DeclSyntax] {
        guard let variable = declaration.as(VariableDeclSyntax.self), let binding = variable.bindings.first,
              let identifier = binding.pattern.as(IdentifierPatternSyntax.self)
        else { return [] }
        var storage = binding.trimmed
        storage.pattern = PatternSyntax(identifier.with(\.identifier, .identifier("_$" + identifier.identifier.text)))
        storage.accessorBlock = nil
        return ["private var \(storage)"]
    }
}
