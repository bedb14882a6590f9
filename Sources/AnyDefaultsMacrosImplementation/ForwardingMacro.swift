import SwiftSyntax
import SwiftSyntaxMacros

/// A macro type of the compiler plug-in that expands as `Implementation` does.
///
/// The compiler asks the plug-in for each macro by the plug-in module's name, so the plug-in must
/// declare types of its own; the expansions live here, in a plain target that tests import (a test
/// depending on a `.macro` target makes SwiftPM build the test graph twice). A plug-in type names
/// its implementation and conforms to the same roles; these extensions supply every role's
/// expansion once, for all macros.
public protocol ForwardingMacro {
    /// The type whose expansions this macro uses.
    associatedtype Implementation
}

extension MemberMacro where Self: ForwardingMacro, Implementation: MemberMacro {
    public static func expansion(
        of node: AttributeSyntax, providingMembersOf declaration: some DeclGroupSyntax,
        conformingTo protocols: [TypeSyntax], in context: some MacroExpansionContext
    ) throws -> [DeclSyntax] {
        try Implementation.expansion(of: node, providingMembersOf: declaration, conformingTo: protocols, in: context)
    }
}

extension MemberAttributeMacro where Self: ForwardingMacro, Implementation: MemberAttributeMacro {
    public static func expansion(
        of node: AttributeSyntax, attachedTo declaration: some DeclGroupSyntax,
        providingAttributesFor member: some DeclSyntaxProtocol, in context: some MacroExpansionContext
    ) throws -> [AttributeSyntax] {
        try Implementation.expansion(of: node, attachedTo: declaration, providingAttributesFor: member, in: context)
    }
}

extension ExtensionMacro where Self: ForwardingMacro, Implementation: ExtensionMacro {
    public static func expansion(
        of node: AttributeSyntax, attachedTo declaration: some DeclGroupSyntax, providingExtensionsOf type: some TypeSyntaxProtocol,
        conformingTo protocols: [TypeSyntax], in context: some MacroExpansionContext
    ) throws -> [ExtensionDeclSyntax] {
        try Implementation.expansion(
            of: node, attachedTo: declaration, providingExtensionsOf: type, conformingTo: protocols, in: context)
    }
}

extension AccessorMacro where Self: ForwardingMacro, Implementation: AccessorMacro {
    public static func expansion(
        of node: AttributeSyntax, providingAccessorsOf declaration: some DeclSyntaxProtocol, in context: some MacroExpansionContext
    ) throws -> [AccessorDeclSyntax] {
        try Implementation.expansion(of: node, providingAccessorsOf: declaration, in: context)
    }
}

extension PeerMacro where Self: ForwardingMacro, Implementation: PeerMacro {
    public static func expansion(
        of node: AttributeSyntax, providingPeersOf declaration: some DeclSyntaxProtocol, in context: some MacroExpansionContext
    ) throws -> [DeclSyntax] {
        try Implementation.expansion(of: node, providingPeersOf: declaration, in: context)
    }
}
