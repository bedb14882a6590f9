import AnyDefaults
import ArgumentParser

struct ReadTypeCommand: ParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "read-type",
        abstract: "Print the type of a key's value, like macOS `defaults read-type`.",
        discussion: """
            Prints one word: string, int, double, bool, date, data, array or dictionary (the \
            --type names of `write`; an array or dictionary is written back with --type json). \
            An absent key exits with status 1, a store that does not exist with 66.
            """)

    @OptionGroup var store: StoreOptions
    @Argument(help: "The key.") var key: String

    func run() throws {
        let (configuration, provider) = try reportingErrors { try store.openExisting() }
        try Console.write(ReadCommand.value(forKey: key, in: provider, configuration).typeName + "\n")
    }
}
