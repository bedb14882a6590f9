import AnyDefaultsMacrosImplementation
import SwiftCompilerPlugin
import SwiftSyntaxMacros

/// The compiler plug-in: the macros AnyDefaultsMacros declares.
///
/// The compiler asks for each macro by this module's name (`#externalMacro(module:
/// "AnyDefaultsMacrosPlugin", ...)`), so the types listed here live in this module and forward to
/// the implementation (see PluginMacros.swift).
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
