import AnyDefaultsMacrosPlugin
import SwiftSyntaxMacroExpansion
import SwiftSyntaxMacrosGenericTestSupport
import Testing

/// Every macro of the plug-in, by the name it is used with.
let macros: [String: MacroSpec] = [
    "ObservableDefaults": MacroSpec(type: ObservableDefaultsMacro.self, conformances: ["ObservableDefaults"]),
    "DefaultsSchema": MacroSpec(type: DefaultsSchemaMacro.self, conformances: ["DefaultsSchema"]),
    "_DefaultsStoredProperty": MacroSpec(type: StoredPropertyMacro.self),
    "_DefaultsMemoryProperty": MacroSpec(type: MemoryPropertyMacro.self),
    "DefaultsBacked": MacroSpec(type: PropertyMarkerMacro.self),
    "SettingKey": MacroSpec(type: PropertyMarkerMacro.self),
    "MemoryOnly": MacroSpec(type: PropertyMarkerMacro.self),
    "DefaultsIgnored": MacroSpec(type: PropertyMarkerMacro.self),
]

/// Expands `source` and checks the result, the diagnostics and, if given, the source once every
/// fix-it is applied; failures are recorded as Swift Testing issues at the caller.
func assertExpansion(
    _ source: String,
    expandsTo expanded: String,
    diagnostics: [DiagnosticSpec] = [],
    applyFixIts: [String]? = nil,
    fixedSource: String? = nil,
    sourceLocation: SourceLocation = #_sourceLocation
) {
    assertMacroExpansion(
        source, expandedSource: expanded, diagnostics: diagnostics, macroSpecs: macros, applyFixIts: applyFixIts, fixedSource: fixedSource,
        failureHandler: { failure in
            Issue.record(Comment(rawValue: failure.message), sourceLocation: sourceLocation)
        })
}
