import Foundation
import SwiftSyntax

/// The rules for the key names and prefixes written in the macros' arguments, checked when the
/// program is compiled.
///
/// Any non-empty string is a key to a store, but some are mistakes that would only show at run
/// time: control characters (invisible, mangled by tools), spaces at either end (a typo that
/// makes another key), and text that is not in Unicode's composed form (stores keep keys
/// composed, so such a prefix would not match the keys listed back).
enum KeyText {
    /// What is wrong with `text` as a key or prefix, and the text that fixes it; `nil` if nothing.
    static func problem(in text: String, isPrefix: Bool) -> (reason: String, fixed: String)? {
        if text.unicodeScalars.contains(where: { $0.properties.generalCategory == .control }) {
            let fixed = String(String.UnicodeScalarView(text.unicodeScalars.filter { $0.properties.generalCategory != .control }))
            return ("it contains control characters", fixed)
        }
        let trimmed = text.trimmingCharacters(in: .whitespacesAndNewlines)
        if trimmed.isEmpty, !(isPrefix && text.isEmpty) {
            return ("it is blank", "")
        }
        if trimmed != text {
            return ("it begins or ends with spaces", trimmed)
        }
        let composed = text.precomposedStringWithCanonicalMapping
        if composed.unicodeScalars.elementsEqual(text.unicodeScalars) == false {
            return ("it is not in the composed Unicode form (NFC) that stores keep keys in", composed)
        }
        return nil
    }

    /// The text of a string literal without interpolation, or `nil` for any other expression.
    static func literal(_ expression: ExprSyntax) -> String? {
        guard let literal = expression.as(StringLiteralExprSyntax.self) else { return nil }
        var text = ""
        for segment in literal.segments {
            guard let part = segment.as(StringSegmentSyntax.self) else { return nil }
            text += part.content.text
        }
        // A raw string's text is as written, unless it escapes with `\#`: then it is not read here.
        if let pounds = literal.openingPounds {
            return text.contains("\\" + pounds.text) ? nil : text
        }
        // Escapes as Swift reads them, for the few that a key might hold.
        if text.contains("\\") {
            guard let unescaped = unescape(text) else { return nil }
            return unescaped
        }
        return text
    }

    /// A string literal for `text`.
    static func literalExpression(_ text: String) -> ExprSyntax {
        ExprSyntax(StringLiteralExprSyntax(content: text))
    }

    private static func unescape(_ text: String) -> String? {
        var result = ""
        var scalars = text.unicodeScalars.makeIterator()
        while let scalar = scalars.next() {
            guard scalar == "\\" else {
                result.unicodeScalars.append(scalar)
                continue
            }
            switch scalars.next() {
            case "n": result += "\n"
            case "t": result += "\t"
            case "r": result += "\r"
            case "0": result += "\0"
            case "\\": result += "\\"
            case "\"": result += "\""
            case "'": result += "'"
            case "u":
                guard scalars.next() == "{" else { return nil }
                var hex = ""
                while let digit = scalars.next(), digit != "}" { hex.unicodeScalars.append(digit) }
                guard let value = UInt32(hex, radix: 16), let unicode = Unicode.Scalar(value) else { return nil }
                result.unicodeScalars.append(unicode)
            default: return nil
            }
        }
        return result
    }
}
