import SwiftDiagnostics
import SwiftSyntax

/// The arguments of `@ObservableDefaults(...)` or `@DefaultsSchema(...)`, checked.
struct MacroArguments {
    /// The store expression, as written; `nil` when left out.
    var store: ExprSyntax?
    var prefix = ""
    var observeFirst = false
    var ignoreExternalChanges = false
    var autoInit = true
    /// What is wrong with them.
    var diagnostics: [Diagnostic] = []

    init(_ attribute: AttributeSyntax) {
        guard case .argumentList(let arguments) = attribute.arguments else { return }
        for argument in arguments {
            switch argument.label?.text {
            case "store":
                store = argument.expression
            case "prefix":
                prefix = checkedPrefix(argument.expression)
            case "observeFirst":
                observeFirst = flag(argument)
            case "ignoreExternalChanges":
                ignoreExternalChanges = flag(argument)
            case "autoInit":
                autoInit = flag(argument)
            default:
                break
            }
        }
    }

    private mutating func checkedPrefix(_ expression: ExprSyntax) -> String {
        guard let text = KeyText.literal(expression) else {
            diagnostics.append(
                Diagnostic(
                    at: expression,
                    .error(
                        "prefixNotLiteral",
                        "the prefix must be a string literal; to choose one when the program runs, pass it to the initializer")))
            return ""
        }
        if let (reason, fixed) = KeyText.problem(in: text, isPrefix: true) {
            diagnostics.append(
                Diagnostic(
                    at: expression, .error("invalidPrefix", "\(text.debugDescription) is not a valid key prefix: \(reason)"),
                    fixIts: [.replace("use \(fixed.debugDescription)", expression, with: KeyText.literalExpression(fixed))]))
            return fixed
        }
        return text
    }

    private mutating func flag(_ argument: LabeledExprSyntax) -> Bool {
        if let literal = argument.expression.as(BooleanLiteralExprSyntax.self) {
            return literal.literal.tokenKind == .keyword(.true)
        }
        diagnostics.append(
            Diagnostic(
                at: argument.expression,
                .error("flagNotLiteral", "'\(argument.label?.text ?? "")' must be the literal true or false")))
        return false
    }
}
