import SwiftDiagnostics
import SwiftSyntax
import SwiftSyntaxMacros

/// `@ObservableDefaults`: makes a class an observable settings model (see the declaration in
/// AnyDefaultsMacros for what users get).
///
/// - member: the storage `_$defaults`, and the initializers unless the class has its own;
/// - member attribute: `@_DefaultsStoredProperty(key)` or `@_DefaultsMemoryProperty` on each
///   property, which turn it into accessors over the storage;
/// - extension: the `ObservableDefaults` conformance (and so `Observable`).
///
/// Its diagnostics are emitted by the member role alone, once.
public enum ObservableDefaultsMacro {
    static let storage = "_$defaults"

    /// The class's arguments, and what becomes of its properties; `nil` if it is not a class.
    static func analyze(_ attribute: AttributeSyntax, _ declaration: some DeclGroupSyntax) -> (MacroArguments, PropertyAnalysis)? {
        guard let type = declaration.as(ClassDeclSyntax.self) else { return nil }
        let arguments = MacroArguments(attribute)
        let analysis = PropertyAnalysis(
            members: type.memberBlock.members,
            host: .model(observeFirst: arguments.observeFirst, generatesInit: generatesInit(type, arguments)),
            prefix: arguments.prefix)
        return (arguments, analysis)
    }

    /// Whether the macro writes the initializers: asked to, and the class declares no designated
    /// initializer of its own.
    static func generatesInit(_ type: ClassDeclSyntax, _ arguments: MacroArguments) -> Bool {
        arguments.autoInit && !type.memberBlock.members.contains { member in
            guard let initializer = member.decl.as(InitializerDeclSyntax.self) else { return false }
            return !initializer.modifiers.contains { $0.name.tokenKind == .keyword(.convenience) }
        }
    }
}

extension ObservableDefaultsMacro: MemberMacro {
    public static func expansion(
        of node: AttributeSyntax, providingMembersOf declaration: some DeclGroupSyntax,
        conformingTo protocols: [TypeSyntax], in context: some MacroExpansionContext
    ) throws -> [DeclSyntax] {
        guard let type = declaration.as(ClassDeclSyntax.self), let (arguments, analysis) = analyze(node, declaration) else {
            context.diagnose(misplaced(node, on: declaration))
            return []
        }
        for diagnostic in arguments.diagnostics + analysis.diagnostics { context.diagnose(diagnostic) }
        if let observable = type.attributes.first(where: { element in
            guard case .attribute(let attribute) = element else { return false }
            return Marks.name(of: attribute) == "Observable"
        }) {
            let others = type.attributes.filter { $0.id != observable.id }
            context.diagnose(
                Diagnostic(
                    at: observable, .error("alsoObservable", "@ObservableDefaults makes the class observable already; remove @Observable"),
                    fixIts: [.replace("remove @Observable", type.attributes, with: others.with(\.leadingTrivia, type.attributes.leadingTrivia))]))
        }

        let store = arguments.store?.trimmedDescription ?? "AnyDefaultsCore.Defaults.standard"
        let prefix = KeyText.literalExpression(arguments.prefix)
        let flag = arguments.ignoreExternalChanges ? "true" : "false"
        guard generatesInit(type, arguments) else {
            return [
                """
                private let \(raw: storage) = AnyDefaultsMacros.ObservableDefaultsStorage(store: \(raw: store), prefix: \(prefix), ignoresExternalChanges: \(raw: flag))
                """
            ]
        }
        let access = AccessLevel(type.modifiers).prefix
        let parameters = "prefix: String = \(prefix), ignoreExternalChanges: Bool = \(flag)"
        let forward = "prefix: prefix, ignoreExternalChanges: ignoreExternalChanges"
        return [
            "private let \(raw: storage): AnyDefaultsMacros.ObservableDefaultsStorage",
            """
            /// A model whose settings live in `store`, under `prefix`; with `ignoreExternalChanges`, its
            /// observers are told only of changes made through it.
            \(raw: access)init(store: AnyDefaultsCore.Defaults = \(raw: store), \(raw: parameters)) {
                \(raw: storage) = AnyDefaultsMacros.ObservableDefaultsStorage(store: store, prefix: prefix, ignoresExternalChanges: ignoreExternalChanges)
            }
            """,
            """
            /// A model whose settings live in the store a store string names, such as `"sqlite:prefs.sqlite"`.
            \(raw: access)convenience init(store: String, \(raw: parameters)) throws(AnyDefaultsCore.DefaultsError) {
                self.init(store: try AnyDefaultsCore.Defaults(url: store), \(raw: forward))
            }
            """,
            """
            /// A model whose settings live in `provider` (behind a cache).
            \(raw: access)convenience init(provider: some AnyDefaultsCore.DefaultsProvider, \(raw: parameters)) {
                self.init(store: AnyDefaultsCore.Defaults(provider), \(raw: forward))
            }
            """,
        ]
    }

    /// The error for the macro on something other than a class, with a fix-it where there is one.
    static func misplaced(_ node: AttributeSyntax, on declaration: some DeclGroupSyntax) -> Diagnostic {
        if declaration.is(StructDeclSyntax.self) {
            var schema = AttributeSyntax(stringLiteral: "@DefaultsSchema").with(\.leadingTrivia, node.leadingTrivia)
                .with(\.trailingTrivia, node.trailingTrivia)
            if case .argumentList(let arguments) = node.arguments, let prefix = arguments.first(where: { $0.label?.text == "prefix" }) {
                schema.leftParen = .leftParenToken()
                schema.arguments = .argumentList([prefix.with(\.trailingComma, nil)])
                schema.rightParen = .rightParenToken()
            }
            return Diagnostic(
                at: node,
                .error("modelOnStruct", "@ObservableDefaults applies to a class; a struct describes a snapshot with @DefaultsSchema"),
                fixIts: [.replace("use @DefaultsSchema", node, with: schema)])
        }
        return Diagnostic(at: node, .error("modelNotClass", "@ObservableDefaults applies to a class"))
    }
}

extension ObservableDefaultsMacro: MemberAttributeMacro {
    public static func expansion(
        of node: AttributeSyntax, attachedTo declaration: some DeclGroupSyntax,
        providingAttributesFor member: some DeclSyntaxProtocol, in context: some MacroExpansionContext
    ) throws -> [AttributeSyntax] {
        guard let variable = member.as(VariableDeclSyntax.self),
              let name = variable.bindings.first?.pattern.as(IdentifierPatternSyntax.self)?.identifier.trimmedDescription,
              let (_, analysis) = analyze(node, declaration),
              let property = analysis.property(named: name)
        else { return [] }
        switch property.role {
        case .stored(let key):
            return ["@_DefaultsStoredProperty(\(KeyText.literalExpression(key)))"]
        case .memoryOnly:
            return ["@_DefaultsMemoryProperty"]
        }
    }
}

extension ObservableDefaultsMacro: ExtensionMacro {
    public static func expansion(
        of node: AttributeSyntax, attachedTo declaration: some DeclGroupSyntax, providingExtensionsOf type: some TypeSyntaxProtocol,
        conformingTo protocols: [TypeSyntax], in context: some MacroExpansionContext
    ) throws -> [ExtensionDeclSyntax] {
        guard declaration.is(ClassDeclSyntax.self), !protocols.isEmpty else { return [] }
        return [try ExtensionDeclSyntax("extension \(type.trimmed): AnyDefaultsMacros.ObservableDefaults {}")]
    }
}

/// The access level of a type, for the members that must match it.
struct AccessLevel {
    /// `"public "`, `"package "` or `""`.
    let prefix: String

    init(_ modifiers: DeclModifierListSyntax) {
        let levels = modifiers.map(\.name.tokenKind)
        if levels.contains(.keyword(.public)) || levels.contains(.keyword(.open)) {
            prefix = "public "
        } else if levels.contains(.keyword(.package)) {
            prefix = "package "
        } else {
            prefix = ""
        }
    }
}
