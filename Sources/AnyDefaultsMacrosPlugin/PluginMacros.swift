import AnyDefaultsMacrosImplementation
import SwiftSyntax
import SwiftSyntaxMacros

// The macros under the names the compiler asks this plug-in for. Each forwards every role to the
// type of the same name in AnyDefaultsMacrosImplementation, a plain target that the expansion tests
// import (a test depending on a `.macro` target makes SwiftPM build every test dependency twice).

/// `@ObservableDefaults`.
public enum ObservableDefaultsMacro: MemberMacro, MemberAttributeMacro, ExtensionMacro {
    public static func expansion(
        of node: AttributeSyntax,
        providingMembersOf declaration: some DeclGroupSyntax,
        conformingTo protocols: [TypeSyntax],
        in context: some MacroExpansionContext
    ) throws -> [DeclSyntax] {
        try AnyDefaultsMacrosImplementation.ObservableDefaultsMacro.expansion(
            of: node, providingMembersOf: declaration, conformingTo: protocols, in: context)
    }

    public static func expansion(
        of node: AttributeSyntax,
        attachedTo declaration: some DeclGroupSyntax,
        providingAttributesFor member: some DeclSyntaxProtocol,
        in context: some MacroExpansionContext
    ) throws -> [AttributeSyntax] {
        try AnyDefaultsMacrosImplementation.ObservableDefaultsMacro.expansion(
            of: node, attachedTo: declaration, providingAttributesFor: member, in: context)
    }

    public static func expansion(
        of node: AttributeSyntax,
        attachedTo declaration: some DeclGroupSyntax,
        providingExtensionsOf type: some TypeSyntaxProtocol,
        conformingTo protocols: [TypeSyntax],
        in context: some MacroExpansionContext
    ) throws -> [ExtensionDeclSyntax] {
        try AnyDefaultsMacrosImplementation.ObservableDefaultsMacro.expansion(
            of: node, attachedTo: declaration, providingExtensionsOf: type, conformingTo: protocols, in: context)
    }
}

/// `@DefaultsSchema`.
public enum DefaultsSchemaMacro: ExtensionMacro {
    public static func expansion(
        of node: AttributeSyntax,
        attachedTo declaration: some DeclGroupSyntax,
        providingExtensionsOf type: some TypeSyntaxProtocol,
        conformingTo protocols: [TypeSyntax],
        in context: some MacroExpansionContext
    ) throws -> [ExtensionDeclSyntax] {
        try AnyDefaultsMacrosImplementation.DefaultsSchemaMacro.expansion(
            of: node, attachedTo: declaration, providingExtensionsOf: type, conformingTo: protocols, in: context)
    }
}

/// The accessors and storage of a property backed by the store.
public enum StoredPropertyMacro: AccessorMacro, PeerMacro {
    public static func expansion(
        of node: AttributeSyntax,
        providingAccessorsOf declaration: some DeclSyntaxProtocol,
        in context: some MacroExpansionContext
    ) throws -> [AccessorDeclSyntax] {
        try AnyDefaultsMacrosImplementation.StoredPropertyMacro.expansion(of: node, providingAccessorsOf: declaration, in: context)
    }

    public static func expansion(
        of node: AttributeSyntax,
        providingPeersOf declaration: some DeclSyntaxProtocol,
        in context: some MacroExpansionContext
    ) throws -> [DeclSyntax] {
        try AnyDefaultsMacrosImplementation.StoredPropertyMacro.expansion(of: node, providingPeersOf: declaration, in: context)
    }
}

/// The accessors and storage of an observable, memory-only property.
public enum MemoryPropertyMacro: AccessorMacro, PeerMacro {
    public static func expansion(
        of node: AttributeSyntax,
        providingAccessorsOf declaration: some DeclSyntaxProtocol,
        in context: some MacroExpansionContext
    ) throws -> [AccessorDeclSyntax] {
        try AnyDefaultsMacrosImplementation.MemoryPropertyMacro.expansion(of: node, providingAccessorsOf: declaration, in: context)
    }

    public static func expansion(
        of node: AttributeSyntax,
        providingPeersOf declaration: some DeclSyntaxProtocol,
        in context: some MacroExpansionContext
    ) throws -> [DeclSyntax] {
        try AnyDefaultsMacrosImplementation.MemoryPropertyMacro.expansion(of: node, providingPeersOf: declaration, in: context)
    }
}

/// `@DefaultsBacked`, `@SettingKey`, `@MemoryOnly`, `@DefaultsIgnored`: markers read by
/// `@ObservableDefaults`.
public enum PropertyMarkerMacro: PeerMacro {
    public static func expansion(
        of node: AttributeSyntax,
        providingPeersOf declaration: some DeclSyntaxProtocol,
        in context: some MacroExpansionContext
    ) throws -> [DeclSyntax] {
        try AnyDefaultsMacrosImplementation.PropertyMarkerMacro.expansion(of: node, providingPeersOf: declaration, in: context)
    }
}
