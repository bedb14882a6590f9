import SwiftDiagnostics
import SwiftSyntax

/// A diagnostic of the AnyDefaults macros: what is wrong and, where it can be said, how to fix it.
struct MacroDiagnostic: DiagnosticMessage {
    let message: String
    let id: String
    let severity: DiagnosticSeverity

    var diagnosticID: MessageID { MessageID(domain: "AnyDefaultsMacros", id: id) }

    static func error(_ id: String, _ message: String) -> MacroDiagnostic {
        MacroDiagnostic(message: message, id: id, severity: .error)
    }

    static func warning(_ id: String, _ message: String) -> MacroDiagnostic {
        MacroDiagnostic(message: message, id: id, severity: .warning)
    }
}

/// The message of a fix-it.
struct MacroFixIt: FixItMessage {
    let message: String
    var fixItID: MessageID { MessageID(domain: "AnyDefaultsMacros", id: message) }

    init(_ message: String) {
        self.message = message
    }
}

extension Diagnostic {
    /// A diagnostic at `node`, with fix-its, each a message and the node it replaces with another.
    init(at node: some SyntaxProtocol, _ message: MacroDiagnostic, fixIts: [FixIt] = []) {
        self.init(node: Syntax(node), message: message, fixIts: fixIts)
    }
}

extension FixIt {
    /// A fix-it that replaces `old` with `new`.
    static func replace(_ message: String, _ old: some SyntaxProtocol, with new: some SyntaxProtocol) -> FixIt {
        FixIt(message: MacroFixIt(message), changes: [.replace(oldNode: Syntax(old), newNode: Syntax(new))])
    }
}
