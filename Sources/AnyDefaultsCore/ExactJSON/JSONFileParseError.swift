/// Why a JSON settings file could not be read, and where: the cause inside the
/// ``DefaultsError`` (code `corrupted`) that the JSON file backend throws for a bad file, and of the
/// errors of ``ExactJSON``.
///
/// ```swift
/// catch let error as DefaultsError where error.code == .corrupted {
///     if let parse = error.cause as? JSONFileParseError { print(parse.line, parse.column) }
/// }
/// ```
///
/// The reason names what was expected, never the text found there, because that text may be a
/// stored secret.
public struct JSONFileParseError: Error, Sendable, Hashable, CustomStringConvertible {
    /// What is wrong, for people.
    public var reason: String
    /// The line of the problem, from 1.
    public var line: Int
    /// The column of the problem, from 1, counted in Unicode scalars.
    public var column: Int
    /// The byte offset of the problem in the file, from 0.
    public var offset: Int

    /// Creates an error; the exact JSON codec makes these, tests and tools may too.
    public init(reason: String, line: Int, column: Int, offset: Int) {
        self.reason = reason
        self.line = line
        self.column = column
        self.offset = offset
    }

    /// An error at byte `offset` of `text`, with its line and column worked out.
    init(_ reason: String, at offset: Int, in text: [UInt8]) {
        var line = 1
        var column = 1
        for byte in text[..<min(max(offset, 0), text.count)] {
            if byte == UInt8(ascii: "\n") {
                line += 1
                column = 1
            } else if byte & 0xC0 != 0x80 {
                // Continuation bytes belong to the scalar already counted.
                column += 1
            }
        }
        self.init(reason: reason, line: line, column: column, offset: offset)
    }

    public var description: String { "line \(line), column \(column): \(reason)" }
}
