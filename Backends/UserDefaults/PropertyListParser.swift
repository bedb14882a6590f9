import AnyDefaultsCore
import Foundation

/// Parses a property list whose top level is a dictionary: binary property lists with
/// ``BinaryPropertyListReader``, anything else (Foundation writes XML) with Foundation.
///
/// With `rejectingDuplicateKeys` (imports, like the JSON reader), a dictionary that names a key
/// twice is refused, also keys that differ in bytes but are equal after Unicode normalization
/// (NFC and NFD spellings of one key), which would otherwise silently keep one of the values.
/// Foundation's XML and OpenStep (old-style text) parsers keep the last of two equal keys without
/// saying so; duplicates are found there by counting the document's keys — `<key>` elements, or
/// `=` signs — against the entries it produced.
enum PropertyListParser {
    /// Why data is not a property list of settings. It never quotes the data, whose text may
    /// hold secrets; only a top-level key (a setting's name) is named.
    struct Failure: Error, Sendable, CustomStringConvertible {
        var description: String
    }

    /// What every binary property list starts with, whatever its version.
    static let binaryPrefix = Array("bplist".utf8)

    static func dictionary(
        from bytes: [UInt8], rejectingDuplicateKeys: Bool
    ) -> Result<[String: PropertyListNode], Failure> {
        // Binary property lists are read by BinaryPropertyListReader alone, also when it rejects
        // them: Foundation on Linux crashes on some (a set inside one, found by Fuzz/FuzzPropertyList),
        // and it takes every "bplist0?" version for binary.
        if bytes.starts(with: binaryPrefix) {
            let root: PropertyListNode
            do {
                root = try BinaryPropertyListReader.read(bytes, rejectingDuplicateKeys: rejectingDuplicateKeys)
            } catch {
                return .failure(Failure(description: "it is a binary property list this library cannot read (\(error))"))
            }
            guard case .dictionary(let dictionary) = root else {
                return .failure(Failure(description: "its top level is not a dictionary"))
            }
            return .success(dictionary)
        }
        let object: Any
        do {
            object = try PropertyListSerialization.propertyList(from: Data(bytes), options: [], format: nil)
        } catch {
            return .failure(Failure(description: "Foundation cannot parse it"))
        }
        guard let objects = object as? [String: Any] else {
            return .failure(Failure(description: "its top level is a \(type(of: object)), not a dictionary"))
        }
        var dictionary: [String: PropertyListNode] = [:]
        dictionary.reserveCapacity(objects.count)
        for (key, object) in objects {
            guard let node = PropertyListNode(object: object, rejectingDuplicateKeys: rejectingDuplicateKeys) else {
                return .failure(
                    Failure(
                        description: rejectingDuplicateKeys
                            ? "it holds a value that is not of a property-list type, or a dictionary that names a key twice"
                            : "it holds a value that is not of a property-list type"))
            }
            // Canonically equivalent keys are equal Strings: the second spelling of a key.
            if dictionary.updateValue(node, forKey: key) != nil, rejectingDuplicateKeys {
                return .failure(Failure(description: "the key \(key.debugDescription) appears more than once (as equal after normalization)"))
            }
        }
        if rejectingDuplicateKeys, (isXML(bytes) ? keyElements(in: bytes) : openStepEntries(in: bytes)) > entries(of: objects) {
            return .failure(Failure(description: "a dictionary names a key more than once"))
        }
        if rejectingDuplicateKeys, let problem = scalarProblem(in: bytes) {
            return .failure(Failure(description: problem))
        }
        return .success(dictionary)
    }

    /// Why a `<date>` or `<real>` of an XML property list holds what an import must refuse, or
    /// `nil`. Foundation reads such text leniently: `2026-02-30T00:00:00Z` as March 2nd, an hour
    /// 25 as the next day, years before 1582 as Julian dates, `1e400` as infinity. An import
    /// takes a date as ``ExactTimestamp`` reads the `$date` form, and a real that is finite or
    /// spelled as an infinity or NaN, as the JSON reader does. (The text is not quoted: it may be
    /// a secret.)
    static func scalarProblem(in bytes: [UInt8]) -> String? {
        guard isXML(bytes) else { return nil }
        for text in elementTexts("date", in: bytes) where ExactTimestamp.interval(from: text) == nil {
            return "a <date> is not a valid date and time in UTC (YYYY-MM-DDTHH:MM:SSZ)"
        }
        let nonFinite: Set<String> = ["nan", "+nan", "-nan", "inf", "+inf", "-inf", "infinity", "+infinity", "-infinity"]
        for text in elementTexts("real", in: bytes) where !nonFinite.contains(text.lowercased()) {
            guard let value = Double(text), value.isFinite else {
                return "a <real> is not a number a double holds (its magnitude is too large, or it is not a number)"
            }
        }
        return nil
    }

    /// The text of every `<name>…</name>` element, trimmed of white space, outside comments and
    /// CDATA sections.
    static func elementTexts(_ name: String, in bytes: [UInt8]) -> [String] {
        let open = Array("<\(name)>".utf8), close = Array("</\(name)>".utf8)
        var texts: [String] = []
        forEachTag(in: bytes) { index in
            guard matches(open, in: bytes, at: index) else { return nil }
            let start = index + open.count
            let end = find(close, in: bytes, from: start)
            texts.append(String(decoding: bytes[start..<end], as: UTF8.self).trimmingCharacters(in: .whitespacesAndNewlines))
            return end + close.count
        }
        return texts
    }

    /// Calls `visit` with the position of every `<` of `bytes` outside comments and CDATA sections
    /// (which are skipped whole); `visit` returns where to go on, or `nil` for the next byte.
    private static func forEachTag(in bytes: [UInt8], _ visit: (Int) -> Int?) {
        let comment = (Array("<!--".utf8), Array("-->".utf8))
        let cdata = (Array("<![CDATA[".utf8), Array("]]>".utf8))
        var index = 0
        while index < bytes.count {
            if bytes[index] != UInt8(ascii: "<") {
                index += 1
            } else if matches(comment.0, in: bytes, at: index) {
                index = find(comment.1, in: bytes, from: index + comment.0.count) + comment.1.count
            } else if matches(cdata.0, in: bytes, at: index) {
                index = find(cdata.1, in: bytes, from: index + cdata.0.count) + cdata.1.count
            } else {
                index = visit(index) ?? index + 1
            }
        }
    }

    private static func matches(_ pattern: [UInt8], in bytes: [UInt8], at position: Int) -> Bool {
        position + pattern.count <= bytes.count && bytes[position..<position + pattern.count].elementsEqual(pattern)
    }

    /// Where `pattern` starts at or after `position`, or the end of `bytes`.
    private static func find(_ pattern: [UInt8], in bytes: [UInt8], from position: Int) -> Int {
        var position = position
        while position < bytes.count, !matches(pattern, in: bytes, at: position) { position += 1 }
        return min(position, bytes.count)
    }

    /// How many dictionary entries `object` holds, at every level.
    private static func entries(of object: Any) -> Int {
        switch object {
        case let dictionary as [String: Any]: dictionary.count + dictionary.values.reduce(0) { $0 + entries(of: $1) }
        case let array as [Any]: array.reduce(0) { $0 + entries(of: $1) }
        default: 0
        }
    }

    /// How many `<key>` elements an XML property list has (`<key>…</key>` and `<key/>`), outside
    /// comments and CDATA sections; 0 for anything that is not XML (in UTF-8).
    static func keyElements(in bytes: [UInt8]) -> Int {
        guard isXML(bytes) else { return 0 }
        let open = Array("<key".utf8)
        let ends: [UInt8] = [UInt8(ascii: ">"), UInt8(ascii: "/"), UInt8(ascii: " "), UInt8(ascii: "\t"), UInt8(ascii: "\n"), UInt8(ascii: "\r")]
        var count = 0
        forEachTag(in: bytes) { index in
            guard matches(open, in: bytes, at: index), index + open.count < bytes.count, ends.contains(bytes[index + open.count]) else {
                return nil
            }
            count += 1
            return index + open.count
        }
        return count
    }

    /// Whether `bytes` are an XML property list (in UTF-8); text that is not is OpenStep.
    static func isXML(_ bytes: [UInt8]) -> Bool {
        let head = String(decoding: bytes.prefix(64), as: UTF8.self).trimmingCharacters(in: .whitespacesAndNewlines)
        let start = head.hasPrefix("\u{FEFF}") ? String(head.dropFirst()) : head
        return start.hasPrefix("<?xml") || start.hasPrefix("<!DOCTYPE") || start.hasPrefix("<plist")
    }

    /// How many `key = value` entries an OpenStep property list (`{ a = 1; o = { b = 2; }; }`, or
    /// a strings file's `"a" = "1";`) has, at every level: its `=` signs outside quoted strings
    /// (`"…"` and `'…'`, with backslash escapes) and comments. Unquoted strings and data cannot
    /// hold one.
    static func openStepEntries(in bytes: [UInt8]) -> Int {
        let slash = UInt8(ascii: "/"), star = UInt8(ascii: "*")
        var count = 0
        var index = 0
        while index < bytes.count {
            let byte = bytes[index]
            let next = index + 1 < bytes.count ? bytes[index + 1] : 0
            if byte == UInt8(ascii: "\"") || byte == UInt8(ascii: "'") {
                index += 1
                while index < bytes.count, bytes[index] != byte { index += bytes[index] == UInt8(ascii: "\\") ? 2 : 1 }
                index += 1
            } else if byte == slash, next == slash {
                while index < bytes.count, bytes[index] != UInt8(ascii: "\n") { index += 1 }
            } else if byte == slash, next == star {
                index += 2
                while index + 1 < bytes.count, !(bytes[index] == star && bytes[index + 1] == slash) { index += 1 }
                index += 2
            } else {
                if byte == UInt8(ascii: "=") { count += 1 }
                index += 1
            }
        }
        return count
    }
}
