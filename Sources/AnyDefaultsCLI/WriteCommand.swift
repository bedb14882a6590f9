import AnyDefaults
import ArgumentParser

struct WriteCommand: ParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "write",
        abstract: "Write a value.",
        discussion: """
            Types: string (the default), int, double (also nan, inf, -inf), bool, date (ISO 8601), \
            data (base64), json (any JSON value: objects become dictionaries, arrays stay arrays, \
            whole numbers become int, others double).
            """)

    @OptionGroup var store: StoreOptions
    @Argument(help: "The key.") var key: String
    @Argument(help: "The value, read as --type says.") var value: String
    @Option(name: .long, help: "How to read VALUE: \(ValueType.allCases.map(\.rawValue).joined(separator: ", ")).")
    var type: ValueType = .string

    func run() throws {
        try reportingErrors {
            let parsed = try type.parse(value)
            try store.open().setValue(parsed, forKey: key)
        }
    }
}
