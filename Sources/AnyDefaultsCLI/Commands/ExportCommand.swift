import AnyDefaults
import ArgumentParser
import Foundation

struct ExportCommand: ParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "export",
        abstract: "Write the whole store to a file (or standard output), exactly and typed.",
        discussion: """
            json (the default): the exact JSON of the JSON file backend, so the export is itself a \
            json: store. plist: a binary property list with one native value per setting (XML \
            would lose the sign of -0.0 and the fraction of a second of dates). Either reads back \
            with `import` into any backend as an identical store. The output file is replaced \
            atomically: a failed or interrupted export leaves what was there. A new output file \
            is readable by its owner only; an existing one keeps its owner and mode; a link is \
            written through (see Docs/CLI.md). A file of the store itself (its data file, lock \
            or journal) is refused.
            """)

    @OptionGroup var store: StoreOptions
    @Option(help: "The format: json or plist.") var format: ExportFormat = .json
    @Option(help: "The file to write (default: standard output); a leading ~ is the home directory.") var output: String?

    func validate() throws {
        if format == .plist, output == nil, Console.standardOutputIsTerminal {
            throw ValidationError("A binary property list is not written to a terminal: give --output FILE or redirect the output.")
        }
    }

    func run() throws {
        try reportingErrors {
            let provider = try store.openExisting().provider
            let data = format.encode(try provider.allValues())
            guard let output else {
                try Console.write(data)
                return
            }
            try OutputFile.write(data, to: output, store: provider.storeIdentity)
        }
    }
}
