import AnyDefaults
import ArgumentParser

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
            one of this command's options (--type, --help) follows `--`.
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
        guard words.count == 1 else {
            throw ValidationError(words.isEmpty ? "Missing expected argument '<value>'." : "Give exactly one VALUE (quote a value with spaces).")
        }
        do {
            _ = try type.parse(value)
        } catch {
            throw ValidationError("VALUE is not a valid \(type.rawValue): \(error.message)")
        }
    }

    func run() throws {
        try reportingErrors {
            let parsed = try type.parse(value)
            try store.open().setValue(parsed, forKey: key)
        }
    }
}
