import AnyDefaults
import AnyDefaultsCore
import ArgumentParser
import Foundation

struct WriteCommand: ParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "write",
        abstract: "Write a value.",
        discussion: """
            Types: string (the default), int (64-bit), double (also nan, inf, -inf), bool (true, \
            false, yes, no, 1, 0), date (ISO 8601, e.g. 2026-11-21T09:30:00Z or \
            2026-11-21T09:30:00.250+01:00, to the millisecond), data (base64), json (any JSON \
            value but null: objects become dictionaries, arrays stay arrays, whole numbers become \
            int, numbers with a fraction or exponent double; and the tagged forms `read` prints, \
            such as {"$date": "..."}, for exact dates, data and non-finite doubles).
            A VALUE that does not parse as its type exits with status 64 and stores nothing. \
            A negative number needs no quoting (write volume -0.5 --type double); a value that is \
            one of this command's options (--type, --help) or a type flag below follows `--`.

            The type flags of macOS `defaults write` work too, before the value: -string, -int \
            (-integer), -float (-double), -bool (-boolean), -date (ISO 8601, or \
            "2026-11-21 09:30:00 +0000"), -data (hexadecimal, e.g. -data 0aff), -array VALUE... \
            and -dict KEY VALUE... (strings, or typed by a flag before each: -array -int 1 a, \
            -dict width -int 1280): write count -int 5, write tags -array a b.
            -array-add VALUE... appends elements (typed as for -array) to the array stored (an absent key starts \
            empty), -dict-add KEY VALUE... adds or replaces entries of the dictionary stored; the \
            value read and the one written are compared and swapped in one transaction, retried \
            if another writer changed the key in between, so no other write is lost. A key that \
            holds another type is left as it is (status 65).
            """)

    @OptionGroup var store: StoreOptions
    @Argument(help: "The key.") var key: String
    // Captures unrecognized dash-prefixed words too, so that negative numbers (-1, -0.0, -inf)
    // work without `--`.
    @Argument(parsing: .allUnrecognized, help: ArgumentHelp("The value, read as --type says.", valueName: "value"))
    var values: [String] = []
    @Option(name: .long, help: "How to read VALUE: \(ValueType.allCases.map(\.rawValue).joined(separator: ", ")).")
    var type: ValueType = .string

    /// The words given for VALUE; `--` (kept by the capture) is not one of them.
    private var words: [String] { values.first == "--" ? Array(values.dropFirst()) : values }

    /// The one VALUE.
    private var value: String { words.first ?? "" }

    func validate() throws {
        if let flag = typeFlag {
            guard type == .string else { throw ValidationError("Give the type once: \(flag.word) or --type, not both.") }
            _ = try flag.parse(Array(words.dropFirst()))
            return
        }
        guard words.count == 1 else {
            if words.isEmpty { throw ValidationError("Missing expected argument '<value>'.") }
            if values.first != "--", let first = words.first, TypeFlag.looksLikeOne(first) {
                throw ValidationError("Unknown type flag \(first): use one of \(TypeFlag.names.joined(separator: " ")), or --type TYPE.")
            }
            throw ValidationError("Give exactly one VALUE (quote a value with spaces).")
        }
        do {
            _ = try type.parse(value)
        } catch {
            throw ValidationError("VALUE is not a valid \(type.rawValue): \(error.message)")
        }
    }

    func run() throws {
        try reportingErrors {
            if let flag = typeFlag, flag.isAddition {
                try Self.add(Array(words.dropFirst()), with: flag, forKey: key, in: store.open())
                return
            }
            let parsed = try typeFlag.map { try $0.parse(Array(words.dropFirst())) } ?? type.parse(value)
            try store.open().setValue(parsed, forKey: key)
        }
    }

    /// `-array-add` / `-dict-add`: reads the value, adds `words` to it and writes it back only if
    /// the key still holds what was read (``DefaultsProvider/apply(_:ifUnchanged:)``), else
    /// reads again; so a write made meanwhile, by any process, is kept.
    private static func add(_ words: [String], with flag: TypeFlag, forKey key: String, in provider: any DefaultsProvider) throws {
        while true {
            let old = try provider.value(forKey: key)
            let new = try flag.adding(try flag.parse(words), to: old, key: key)
            if try provider.apply([.set(key, new)], ifUnchanged: [key: old]) { return }
        }
    }

    /// The macOS `defaults` type flag the value starts with (`-int 5`), unless `--` came first.
    private var typeFlag: TypeFlag? {
        guard values.first != "--", let first = values.first else { return nil }
        return TypeFlag(first)
    }
}

/// A type flag of macOS `defaults write`, and how it reads the words after it.
private struct TypeFlag {
    enum Kind { case one(Scalar), array, dictionary, arrayAddition, dictionaryAddition }
    enum Scalar { case typed(ValueType), date, hexData }

    let word: String
    let kind: Kind

    /// The flags, in the order help lists them. Spelled exactly (as macOS `defaults` does), so
    /// that a value such as `-Data` stays a value.
    private static let kinds: KeyValuePairs<String, Kind> = [
        "-string": .one(.typed(.string)), "-int": .one(.typed(.int)), "-integer": .one(.typed(.int)),
        "-float": .one(.typed(.double)), "-double": .one(.typed(.double)), "-bool": .one(.typed(.bool)),
        "-boolean": .one(.typed(.bool)), "-date": .one(.date), "-data": .one(.hexData), "-array": .array, "-dict": .dictionary,
        "-array-add": .arrayAddition, "-dict-add": .dictionaryAddition,
    ]

    static var names: [String] { kinds.map(\.key) }

    init?(_ word: String) {
        guard let kind = Self.kinds.first(where: { $0.key == word })?.value else { return nil }
        self.word = word
        self.kind = kind
    }

    /// Whether `word` reads as a misspelt type flag (`-long`, `-Int`) rather than a value: a dash
    /// and letters only, so that negative numbers (`-1`, `-inf` is letters but one word) are not.
    static func looksLikeOne(_ word: String) -> Bool {
        word.count > 2 && word.hasPrefix("-") && word.dropFirst().allSatisfy { $0.isLetter || $0 == "-" }
    }

    /// Whether the flag adds to the value stored (`-array-add`, `-dict-add`) rather than replacing it.
    var isAddition: Bool {
        switch kind {
        case .arrayAddition, .dictionaryAddition: true
        default: false
        }
    }

    /// `addition` (what ``parse(_:)`` gave) added to `old`, the value stored under `key`: the
    /// elements appended, or the entries added or replaced. A ``CommandFailure`` (65) when `old`
    /// is of another type; the value is not named (it may be a secret).
    func adding(_ addition: DefaultsValue, to old: DefaultsValue?, key: String) throws(CommandFailure) -> DefaultsValue {
        switch (addition, old) {
        case (.array, nil), (.dictionary, nil):
            return addition
        case (.array(let added), .array(let elements)?):
            return .array(elements + added)
        case (.dictionary(let added), .dictionary(let entries)?):
            return .dictionary(entries.merging(added) { $1 })
        default:
            let wanted = if case .array = addition { "an array" } else { "a dictionary" }
            throw CommandFailure(
                ExitStatus.dataError,
                "\(Console.listed(key)) holds a \(old?.typeName ?? "value"), not \(wanted): \(word) left it unchanged.")
        }
    }

    /// The value the words after the flag give; a usage error (64) when they do not fit. For
    /// `-array-add` and `-dict-add`, the elements or entries to add.
    func parse(_ words: [String]) throws(ValidationError) -> DefaultsValue {
        switch kind {
        case .array, .arrayAddition:
            var elements: [DefaultsValue] = []
            var index = 0
            while index < words.count { elements.append(try element(of: words, at: &index)) }
            return .array(elements)
        case .dictionary, .dictionaryAddition:
            var entries: [String: DefaultsValue] = [:]
            var index = 0
            while index < words.count {
                let key = words[index]
                index += 1
                guard index < words.count else { throw ValidationError("\(word) takes KEY VALUE pairs; \(words.count) words were given.") }
                // As `--type json` refuses an object that names a key twice: the second would
                // silently replace the first (also a second spelling, equal after normalization).
                guard entries.updateValue(try element(of: words, at: &index), forKey: key) == nil else {
                    throw ValidationError("\(word) names the key \(key.debugDescription) twice (or two spellings of it, equal after Unicode normalization); give each key once.")
                }
            }
            return .dictionary(entries)
        case .one(let scalar):
            guard words.count == 1 else {
                throw ValidationError(words.isEmpty ? "\(word) needs a value." : "\(word) takes one value (quote a value with spaces).")
            }
            return try parse(words[0], as: scalar)
        }
    }

    /// The element of an array (or the value of a dictionary entry) at `index`, moving past it: a
    /// string, or with a scalar type flag before it that type, as macOS `defaults` reads them
    /// (`-array -int 1 -string -int`, `-dict width -int 1280`).
    private func element(of words: [String], at index: inout Int) throws(ValidationError) -> DefaultsValue {
        let first = words[index]
        index += 1
        guard let flag = TypeFlag(first) else { return .string(first) }
        guard case .one(let scalar) = flag.kind else {
            throw ValidationError("\(word) cannot hold \(first): for arrays or dictionaries inside others use --type json.")
        }
        guard index < words.count else { throw ValidationError("\(first) inside \(word) needs a value (-string \(first) for the word itself).") }
        index += 1
        return try flag.parse(words[index - 1], as: scalar)
    }

    private func parse(_ text: String, as scalar: Scalar) throws(ValidationError) -> DefaultsValue {
        do throws(DefaultsError) {
            switch scalar {
            case .typed(let type): return try type.parse(text)
            case .date:
                if let date = Self.macOSDate(text) { return .date(date) }
                return try ValueType.date.parse(text)
            case .hexData:
                guard let data = Self.hexData(text) else { throw DefaultsError(.invalidValue, "expected hexadecimal bytes such as 0aff.", backend: "anydefaults") }
                return .data(data)
            }
        } catch {
            throw ValidationError("The value after \(word) is not valid: \(error.message)")
        }
    }

    /// A date as macOS `defaults` prints it: `2026-11-21 09:30:00 +0000`, read as strictly as
    /// ``ValueType/parseDate(_:)`` reads ISO 8601 (it is the same text, spelled differently).
    private static func macOSDate(_ text: String) -> Date? {
        let parts = text.trimmingCharacters(in: .whitespaces).split(separator: " ", omittingEmptySubsequences: false)
        guard parts.count == 3, parts[0].utf8.count == 10, parts[1].utf8.count == 8, parts[2].utf8.count == 5,
            let sign = parts[2].first, sign == "+" || sign == "-"
        else { return nil }
        let offset = parts[2]
        let iso = "\(parts[0])T\(parts[1])\(offset.prefix(3)):\(offset.suffix(2))"
        return ExactTimestamp.interval(from: iso).map(Date.init(timeIntervalSinceReferenceDate:))
    }

    /// Bytes written as hexadecimal digits (spaces and a `<…>` around them allowed, as macOS prints data).
    private static func hexData(_ text: String) -> Data? {
        let digits = text.filter { !$0.isWhitespace && $0 != "<" && $0 != ">" }
        guard digits.count.isMultiple(of: 2), digits.allSatisfy(\.isHexDigit) else { return nil }
        var bytes: [UInt8] = []
        var index = digits.startIndex
        while index < digits.endIndex {
            let next = digits.index(index, offsetBy: 2)
            guard let byte = UInt8(digits[index..<next], radix: 16) else { return nil }
            bytes.append(byte)
            index = next
        }
        return Data(bytes)
    }
}
