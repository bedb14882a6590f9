import AnyDefaults
import ArgumentParser

struct KeysCommand: ParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "keys", abstract: "List the keys, one per line, sorted.",
        discussion: """
            Each key prints on one line: a backslash prints as \\\\ and a control character (a \
            newline, a tab, ESC...) or a line separator as \\u{XX}, so that no key can print \
            as two lines; `read` (the whole store) shows keys as exact JSON.
            """)

    @OptionGroup var store: StoreOptions
    @Option(help: "Only keys that start with this prefix (compared in canonical form, byte by byte; no wildcards).") var prefix: String?

    func run() throws {
        // A prefix query of the store's index: sorted by UTF-8 bytes, and only the keys under it read.
        let listed = try reportingErrors { try store.openExisting().provider.keys(withPrefix: prefix ?? "") }
        try Console.write(listed.map { Console.listed($0) + "\n" }.joined())
    }
}
