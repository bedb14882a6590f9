import SwiftDiagnostics
import SwiftSyntax
import SwiftSyntaxMacros

/// `@DefaultsBacked`, `@SettingKey`, `@MemoryOnly` and `@DefaultsIgnored`: marks that expand to
/// nothing; the macro on the enclosing type reads them. Each checks only that it sits on a property
/// of a type with that macro, where it means something.
public enum PropertyMarkerMacro: PeerMacro {
    public static func expansion(
        of node: AttributeSyntax, providingPeersOf declaration: some DeclSyntaxProtocol, in context: some MacroExpansionContext
    ) throws -> [DeclSyntax] {
        let mark = Marks.name(of: node)
        guard declaration.is(VariableDeclSyntax.self) else {
            context.diagnose(Diagnostic(at: node, .error("markNotOnProperty", "@\(mark) applies to a property")))
            return []
        }
        let host = context.lexicalContext.lazy.compactMap { $0.asProtocol(WithAttributesSyntax.self) }.first
        let macros = host?.attributes.compactMap { element -> String? in
            guard case .attribute(let attribute) = element else { return nil }
            return Marks.name(of: attribute)
        } ?? []
        if !macros.contains("ObservableDefaults"), !macros.contains("DefaultsSchema") {
            context.diagnose(
                Diagnostic(
                    at: node,
                    .error(
                        "markOutsideModel",
                        "@\(mark) has an effect only on a property of an @ObservableDefaults class or a @DefaultsSchema struct")))
        }
        return []
    }
}
