import AnyDefaults
import ArgumentParser

struct ReadCommand: ParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "read",
        abstract: "Print a value as JSON, or the whole store as one JSON object.",
        discussion: """
            Values print in the exact JSON of the JSON file backend: strings quoted, doubles always \
            with a fraction or exponent (1.0), and tagged objects for what JSON cannot hold exactly: \
            {"$date": "2026-11-21T09:30:00.25Z"}, {"$data": "base64"}, {"$double": "nan"}. \
            `write --type json` reads the same forms back. Without KEY the whole store prints as \
            one object, itself a valid JSON file store. An absent key exits with status 1.
            """)

    @OptionGroup var store: StoreOptions
    @Argument(help: "The key; leave it out for the whole store.") var key: String?
    @Flag(help: "Print a string value bare, without quotes or escapes (other values print as JSON).")
    var raw = false

    func validate() throws {
        if raw, key == nil { throw ValidationError("--raw needs a KEY.") }
    }

    func run() throws {
        let (configuration, provider) = try reportingErrors { try store.openExisting() }
        guard let key else {
            let values = try reportingErrors { try provider.allValues() }
            try Console.write(ExactJSON.data(from: values))
            return
        }
        let value = try Self.value(forKey: key, in: provider, configuration)
        if raw, case .string(let text) = value {
            try Console.write(text + "\n")
        } else {
            try Console.write(ExactJSON.string(from: value) + "\n")
        }
    }

    /// The value of `key`; an absent key says so on standard error and exits with status 1.
    static func value(forKey key: String, in provider: any DefaultsProvider, _ configuration: StoreConfiguration) throws -> DefaultsValue {
        guard let value = try reportingErrors({ try provider.value(forKey: key) }) else {
            Console.error("no value for the key \(key.debugDescription) in \(configuration)")
            throw ExitCode(ExitStatus.negative)
        }
        return value
    }
}
