import SwiftDiagnostics
import SwiftSyntax
import SwiftSyntaxMacros

/// `@DefaultsSchema`: makes a struct the schema of a typed snapshot, by an extension that adds
/// the `DefaultsSchema` conformance:
///
/// ```swift
/// extension Audio: AnyDefaultsMacros.DefaultsSchema {
///     static var defaultsSchemaKeys: [String] { ["audio.volume", "audio.is_muted"] }
///     init(defaultsSchemaValues values: AnyDefaultsMacros.DefaultsSchemaValues) {
///         self.volume = values.value(forKey: "audio.volume", default: self.volume)
///         ...
///     }
///     func writeDefaultsSchemaChanges(from old: Self, to transaction: inout AnyDefaultsCore.DefaultsTransaction) { ... }
///     static func == (lhs: Self, rhs: Self) -> Bool { ... }
/// }
/// ```
///
/// The initializer starts from the properties' own initial values and reads each default from
/// there, so an initial value is evaluated once; being in an extension, it leaves the struct's
/// own initializers (`Audio()`) in place.
public enum DefaultsSchemaMacro: ExtensionMacro {
    public static func expansion(
        of node: AttributeSyntax, attachedTo declaration: some DeclGroupSyntax, providingExtensionsOf type: some TypeSyntaxProtocol,
        conformingTo protocols: [TypeSyntax], in context: some MacroExpansionContext
    ) throws -> [ExtensionDeclSyntax] {
        guard let schema = declaration.as(StructDeclSyntax.self) else {
            context.diagnose(misplaced(node, on: declaration))
            return []
        }
        let arguments = MacroArguments(node)
        let analysis = PropertyAnalysis(members: schema.memberBlock.members, host: .schema, prefix: arguments.prefix)
        let diagnostics = arguments.diagnostics + analysis.diagnostics
        for diagnostic in diagnostics { context.diagnose(diagnostic) }
        if diagnostics.contains(where: { $0.diagMessage.severity == .error }) { return [] }

        let access = AccessLevel(schema.modifiers).prefix
        var keys: [ExprSyntax] = []
        var reads: [String] = []
        var writes: [String] = []
        var comparisons: [String] = []
        for property in analysis.properties {
            guard case .stored(let key) = property.role else { continue }
            let fullKey = KeyText.literalExpression(arguments.prefix + key)
            let name = property.name
            keys.append(fullKey)
            reads.append("self.\(name) = values.value(forKey: \(fullKey), default: self.\(name))")
            writes.append("AnyDefaultsMacros.DefaultsSchemaValues.write(\(name), old: old.\(name), forKey: \(fullKey), to: &transaction)")
            comparisons.append("AnyDefaultsMacros.DefaultsSchemaEquality.equal(lhs.\(name), rhs.\(name))")
        }
        let conformance = protocols.isEmpty ? "" : ": AnyDefaultsMacros.DefaultsSchema"
        let keyList = keys.map(\.description).joined(separator: ", ")
        let hasEquality = schema.memberBlock.members.contains { member in
            member.decl.as(FunctionDeclSyntax.self)?.name.text == "=="
        }
        let equality = hasEquality ? "" : """


            \(access)static func == (lhs: Self, rhs: Self) -> Bool {
                \(comparisons.isEmpty ? "true" : comparisons.joined(separator: "\n        && "))
            }
            """
        let body = """
            extension \(type.trimmed)\(conformance) {
                \(access)static var defaultsSchemaKeys: [String] {
                    [\(keyList)]
                }

                \(access)init(defaultsSchemaValues values: AnyDefaultsMacros.DefaultsSchemaValues) {
                    \(reads.joined(separator: "\n        "))
                }

                \(access)func writeDefaultsSchemaChanges(from old: Self, to transaction: inout AnyDefaultsCore.DefaultsTransaction) {
                    \(writes.joined(separator: "\n        "))
                }\(equality)
            }
            """
        return [try ExtensionDeclSyntax("\(raw: body)")]
    }

    /// The error for the macro on something other than a struct, with a fix-it where there is one.
    static func misplaced(_ node: AttributeSyntax, on declaration: some DeclGroupSyntax) -> Diagnostic {
        if declaration.is(ClassDeclSyntax.self) {
            let model = node.with(\.attributeName, TypeSyntax(IdentifierTypeSyntax(name: .identifier("ObservableDefaults"))))
            return Diagnostic(
                at: node,
                .error("schemaOnClass", "@DefaultsSchema applies to a struct; a class becomes an observable settings model with @ObservableDefaults"),
                fixIts: [.replace("use @ObservableDefaults", node, with: model)])
        }
        return Diagnostic(at: node, .error("schemaNotStruct", "@DefaultsSchema applies to a struct"))
    }
}
