import SwiftDiagnostics
import SwiftSyntax

/// What each property of an `@ObservableDefaults` class or a `@DefaultsSchema` struct becomes,
/// and what is wrong with the ones that cannot become it.
///
/// Every role of the type macros reads the same analysis, so the member, member-attribute and
/// extension expansions agree; only one of them emits its diagnostics.
struct PropertyAnalysis {
    /// The type the properties belong to.
    enum Host {
        /// An `@ObservableDefaults` class: `observeFirst` makes unmarked properties memory-only;
        /// `generatesInit` says whether the macro writes the initializer (then every property
        /// needs a value to start with).
        case model(observeFirst: Bool, generatesInit: Bool)
        /// A `@DefaultsSchema` struct: every stored property is a key.
        case schema
    }

    enum Role: Equatable {
        /// Stored under `key`, after the prefix.
        case stored(key: String)
        /// Observable, kept in memory.
        case memoryOnly
    }

    struct Property {
        let declaration: VariableDeclSyntax
        let name: String
        let type: TypeSyntax?
        let initializer: ExprSyntax?
        let role: Role
    }

    /// The properties that are stored or observed, in declaration order.
    private(set) var properties: [Property] = []
    private(set) var diagnostics: [Diagnostic] = []

    init(members: MemberBlockItemListSyntax, host: Host, prefix: String) {
        var keys: [String: String] = [:]
        for member in members {
            guard let variable = member.decl.as(VariableDeclSyntax.self),
                  let property = analyze(variable, host: host)
            else { continue }
            if case .stored(let key) = property.role {
                if let other = keys[key] {
                    diagnostics.append(
                        Diagnostic(
                            at: variable.bindings,
                            .error("duplicateKey", "'\(property.name)' is stored under the same key as '\(other)', \((prefix + key).debugDescription)")))
                    continue
                }
                keys[key] = property.name
            }
            properties.append(property)
        }
    }

    /// The property `name`, if it is stored or observed.
    func property(named name: String) -> Property? {
        properties.first { $0.name == name }
    }

    // MARK: One property

    /// Reports `message` at the first of `attributes`, if any, with a fix-it that removes them all.
    private mutating func reject(
        _ attributes: [AttributeSyntax], of variable: VariableDeclSyntax, marks: Marks, _ message: MacroDiagnostic
    ) {
        guard let first = attributes.first else { return }
        let removal = marks.removal("remove the attribute", from: variable, removing: attributes)
        diagnostics.append(Diagnostic(at: first, message, fixIts: [removal]))
    }

    private mutating func analyze(_ variable: VariableDeclSyntax, host: Host) -> Property? {
        let marks = Marks(variable.attributes)
        if variable.modifiers.contains(where: { [.keyword(.static), .keyword(.class), .keyword(.lazy)].contains($0.name.tokenKind) }) {
            reject(marks.all, of: variable, marks: marks, .error("markOnStatic", "only instance properties can be stored or observed"))
            return nil
        }
        if case .model = host, marks.ignored != nil { return nil }
        guard variable.bindings.count == 1, let binding = variable.bindings.first,
              let identifier = binding.pattern.as(IdentifierPatternSyntax.self)
        else {
            diagnostics.append(
                Diagnostic(at: variable.bindings, .error("oneBinding", "declare each stored property with a 'var' of its own")))
            return nil
        }
        let name = identifier.identifier.trimmedDescription
        let accessors = Accessors(binding.accessorBlock)
        if accessors.isComputed {
            reject(
                [marks.backed, marks.key, marks.memory].compactMap { $0 }, of: variable, marks: marks,
                .error("computedMarked", "a computed property cannot be stored or observed: it has no value of its own"))
            return nil
        }
        if variable.bindingSpecifier.tokenKind == .keyword(.let) {
            let specifier = variable.bindingSpecifier
            let useVar = FixIt.replace(
                "use 'var'", specifier,
                with: TokenSyntax.keyword(.var, leadingTrivia: specifier.leadingTrivia, trailingTrivia: specifier.trailingTrivia))
            switch host {
            case .model:
                diagnostics.append(
                    Diagnostic(
                        at: variable.bindingSpecifier,
                        .warning("letNotStored", "'let \(name)' is neither stored nor observed; use 'var' to store it, or mark it @DefaultsIgnored"),
                        fixIts: [useVar, marks.adding("mark it @DefaultsIgnored", "DefaultsIgnored", to: variable)]))
            case .schema:
                diagnostics.append(
                    Diagnostic(
                        at: variable.bindingSpecifier,
                        .error("letInSchema", "'let \(name)' cannot be read from the store; a schema's properties are 'var'"),
                        fixIts: [useVar]))
            }
            return nil
        }

        // The role the marks give.
        let role: Role
        switch host {
        case .model(let observeFirst, _):
            let kinds = [marks.memory != nil, marks.backed != nil || marks.key != nil].filter { $0 }.count
            if kinds > 1 || (marks.backed?.arguments != nil && marks.key != nil) {
                diagnostics.append(
                    Diagnostic(at: marks.all[1], .error("conflictingMarks", "'\(name)' has marks that contradict each other; keep one")))
                return nil
            }
            if marks.memory != nil {
                role = .memoryOnly
            } else if marks.backed != nil || marks.key != nil || !observeFirst {
                guard let key = key(for: name, marks: marks, variable: variable) else { return nil }
                role = .stored(key: key)
            } else {
                role = .memoryOnly
            }
        case .schema:
            let memoryOnly = [marks.memory, marks.ignored].compactMap { $0 }
            guard memoryOnly.isEmpty else {
                reject(
                    memoryOnly, of: variable, marks: marks,
                    .error("notInSchema", "every property of a schema is read from the store; keep values that are not in a separate type"))
                return nil
            }
            guard let key = key(for: name, marks: marks, variable: variable) else { return nil }
            role = .stored(key: key)
        }

        if accessors.hasObservers {
            diagnostics.append(
                Diagnostic(
                    at: binding.accessorBlock ?? AccessorBlockSyntax(accessors: .accessors([])),
                    .error("observers", "'\(name)' cannot have willSet or didSet: observe it with Observation instead")))
            return nil
        }

        let type = binding.typeAnnotation?.type
        let initializer = binding.initializer?.value
        if let initializer, type == nil, Self.needsContext(initializer) {
            var annotated = binding
            annotated.pattern = PatternSyntax(identifier.with(\.trailingTrivia, []))
            annotated.typeAnnotation = TypeAnnotationSyntax(
                colon: .colonToken(trailingTrivia: .space),
                type: TypeSyntax(IdentifierTypeSyntax(name: .identifier("<#Type#>"))),
                trailingTrivia: .space)
            diagnostics.append(
                Diagnostic(
                    at: initializer,
                    .error("needsType", "'\(name)' needs a type annotation: its type cannot be told from \(initializer.trimmedDescription)"),
                    fixIts: [.replace("add a type annotation", binding, with: annotated)]))
            return nil
        }
        if initializer == nil, !Self.isOptional(type) {
            let needsValue: Bool
            switch (host, role) {
            case (.model(_, let generatesInit), .memoryOnly): needsValue = generatesInit
            default: needsValue = true
            }
            if needsValue {
                let why = role == .memoryOnly ? "to start with (or write an initializer)" : "to read while nothing is stored"
                var fixIts: [FixIt] = []
                if type != nil {
                    var valued = binding
                    valued.typeAnnotation = valued.typeAnnotation?.with(\.trailingTrivia, .space)
                    valued.initializer = InitializerClauseSyntax(
                        equal: .equalToken(trailingTrivia: .space),
                        value: ExprSyntax(DeclReferenceExprSyntax(baseName: .identifier("<#default#>"))))
                    fixIts.append(.replace("add a default value", binding, with: valued))
                }
                diagnostics.append(
                    Diagnostic(at: binding, .error("needsValue", "'\(name)' needs an initial value, the value \(why)"), fixIts: fixIts))
                return nil
            }
        }
        return Property(declaration: variable, name: name, type: type, initializer: initializer, role: role)
    }

    /// The key of a stored property: the one its marks give, else its name.
    private mutating func key(for name: String, marks: Marks, variable: VariableDeclSyntax) -> String? {
        guard let (attribute, expression) = marks.keyArgument else { return name }
        guard let text = KeyText.literal(expression) else {
            diagnostics.append(Diagnostic(at: expression, .error("keyNotLiteral", "the key must be a string literal")))
            return nil
        }
        if let (reason, fixed) = KeyText.problem(in: text, isPrefix: false) {
            let fixIt = fixed.isEmpty
                ? marks.removal("store it under its name", from: variable, removing: [attribute])
                : .replace("use \(fixed.debugDescription)", expression, with: KeyText.literalExpression(fixed))
            diagnostics.append(
                Diagnostic(at: expression, .error("invalidKey", "\(text.debugDescription) is not a valid key: \(reason)"), fixIts: [fixIt]))
            return nil
        }
        return text
    }

    // MARK: Syntax

    /// Whether `expression` has no type without a context: `.member`, `nil`, `[]`, `[:]`.
    static func needsContext(_ expression: ExprSyntax) -> Bool {
        if expression.is(NilLiteralExprSyntax.self) { return true }
        if let member = expression.as(MemberAccessExprSyntax.self) { return member.base == nil }
        if let call = expression.as(FunctionCallExprSyntax.self), let member = call.calledExpression.as(MemberAccessExprSyntax.self) {
            return member.base == nil
        }
        if let array = expression.as(ArrayExprSyntax.self) { return array.elements.isEmpty }
        if let dictionary = expression.as(DictionaryExprSyntax.self) {
            if case .colon = dictionary.content { return true }
        }
        return false
    }

    /// Whether `type` is written as an optional (`T?`, `T!` or `Optional<T>`), which defaults to `nil`.
    static func isOptional(_ type: TypeSyntax?) -> Bool {
        guard let type else { return false }
        if type.is(OptionalTypeSyntax.self) || type.is(ImplicitlyUnwrappedOptionalTypeSyntax.self) { return true }
        if let identifier = type.as(IdentifierTypeSyntax.self) { return identifier.name.text == "Optional" }
        if let member = type.as(MemberTypeSyntax.self) { return member.name.text == "Optional" }
        return false
    }
}

/// The accessors a property is written with.
struct Accessors {
    /// Whether it is computed (a getter, or get/set without storage).
    let isComputed: Bool
    /// Whether it has willSet or didSet.
    let hasObservers: Bool

    init(_ block: AccessorBlockSyntax?) {
        switch block?.accessors {
        case .getter?:
            isComputed = true
            hasObservers = false
        case .accessors(let list)?:
            let kinds = list.map(\.accessorSpecifier.tokenKind)
            hasObservers = kinds.contains(.keyword(.willSet)) || kinds.contains(.keyword(.didSet))
            isComputed = kinds.contains { $0 != .keyword(.willSet) && $0 != .keyword(.didSet) }
        case nil:
            isComputed = false
            hasObservers = false
        }
    }
}

/// The AnyDefaults marks on a property (and `@ObservationIgnored`).
struct Marks {
    var backed: AttributeSyntax?
    var key: AttributeSyntax?
    var memory: AttributeSyntax?
    var ignored: AttributeSyntax?
    /// Every mark, in the order written.
    var all: [AttributeSyntax] = []

    init(_ attributes: AttributeListSyntax) {
        for element in attributes {
            guard case .attribute(let attribute) = element else { continue }
            switch Self.name(of: attribute) {
            case "DefaultsBacked": backed = attribute
            case "SettingKey": key = attribute
            case "MemoryOnly": memory = attribute
            case "DefaultsIgnored", "ObservationIgnored": ignored = attribute
            default: continue
            }
            all.append(attribute)
        }
    }

    /// The attribute naming the key, and its argument.
    var keyArgument: (AttributeSyntax, ExprSyntax)? {
        for attribute in [key, backed].compactMap({ $0 }) {
            if case .argumentList(let arguments) = attribute.arguments, let first = arguments.first,
               !first.expression.is(NilLiteralExprSyntax.self)
            {
                return (attribute, first.expression)
            }
        }
        return nil
    }

    /// The last part of an attribute's name: `MemoryOnly` for `@AnyDefaultsMacros.MemoryOnly`.
    static func name(of attribute: AttributeSyntax) -> String {
        if let member = attribute.attributeName.as(MemberTypeSyntax.self) { return member.name.text }
        return attribute.attributeName.trimmedDescription
    }

    /// A fix-it that removes `attributes` from `variable`.
    func removal(_ message: String, from variable: VariableDeclSyntax, removing attributes: [AttributeSyntax]) -> FixIt {
        let ids = Set(attributes.map(\.id))
        var fixed = variable
        fixed.attributes = variable.attributes.filter { element in
            guard case .attribute(let attribute) = element else { return true }
            return !ids.contains(attribute.id)
        }
        return .replace(message, variable, with: fixed.with(\.leadingTrivia, variable.leadingTrivia))
    }

    /// A fix-it that adds `@name` to `variable`.
    func adding(_ message: String, _ name: String, to variable: VariableDeclSyntax) -> FixIt {
        var fixed = variable.with(\.leadingTrivia, [])
        let attribute = AttributeSyntax(
            atSign: .atSignToken(leadingTrivia: variable.leadingTrivia),
            attributeName: TypeSyntax(IdentifierTypeSyntax(name: .identifier(name, trailingTrivia: .space))))
        fixed.attributes = AttributeListSyntax([.attribute(attribute)] + Array(fixed.attributes))
        return .replace(message, variable, with: fixed)
    }
}
