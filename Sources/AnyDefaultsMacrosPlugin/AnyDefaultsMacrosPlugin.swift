import SwiftCompilerPlugin
import SwiftSyntaxMacros

/// The compiler plug-in: the macros AnyDefaultsMacros declares.
@main
struct AnyDefaultsMacrosPlugin: CompilerPlugin {
    let providingMacros: [any Macro.Type] = [
        ObservableDefaultsMacro.self,
        DefaultsSchemaMacro.self,
        StoredPropertyMacro.self,
        MemoryPropertyMacro.self,
        PropertyMarkerMacro.self,
    ]
}
