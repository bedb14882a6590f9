import AnyDefaults
import ArgumentParser
import Foundation

struct ImportCommand: ParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "import",
        abstract: "Read an export back into the store, in one atomic batch.",
        discussion: """
            FILE is what `export` wrote (or - for standard input); its format is detected unless \
            --format says (a property list may also be XML). Every key of the file is written; \
            with --replace, keys of the store that the file does not hold are removed too. All of \
            it is one batch: on a backend with atomic batches (json:, sqlite:, lmdb:, and \
            userdefaults: on Linux) the store holds all of the import or none of it, even if the \
            process is killed part-way. A file that cannot be read exits with status 66, a damaged \
            one with 65; either way the store is not touched.
            """)

    @OptionGroup var store: StoreOptions
    @Argument(help: "The file to import (a leading ~ is the home directory), or - for standard input.") var file: String
    @Option(help: "The file's format: json or plist (default: detected).") var format: ExportFormat?
    @Flag(help: "Remove the store's keys that the file does not hold, in the same batch.") var replace = false

    func run() throws {
        let progress = ProgressLine("import")
        defer { progress.clear() }
        try reportingErrors {
            progress.show("reading \(file)")
            let data = try InputFile.read(file) { (byte: UInt8) throws(CommandFailure) in
                guard ExportFormat.mayStart(with: byte, as: self.format) else {
                    throw CommandFailure(
                        ExitStatus.dataError,
                        "\(file) is not a valid \(self.format?.rawValue ?? "json or plist") export: it does not start like one (a JSON export starts with {, a property list with <?xml, <plist or bplist)")
                }
            }
            let format = format ?? ExportFormat.detect(data)
            progress.show("parsing \(data.count) bytes of \(format.rawValue)")
            let values: [String: DefaultsValue]
            do throws(DefaultsError) {
                values = try format.decode(data)
            } catch {
                throw CommandFailure(ExitStatus.dataError, "\(file) is not a valid \(format.rawValue) export: \(error.message)\(error.key.map { " (key: \($0.debugDescription))" } ?? "")")
            }
            let configuration = try store.configuration()
            let provider = try store.openForCommand(configuration)
            var changes: [DefaultsChange] = []
            if replace {
                progress.show("listing the keys of \(configuration)")
                changes = try provider.keys().filter { values[$0] == nil }.sorted().map { .remove($0) }
            }
            let removals = changes.count
            changes += values.sorted { $0.key < $1.key }.map { .set($0.key, $0.value) }
            progress.show("writing \(values.count) keys\(removals > 0 ? " and \(removals) removals" : "") in one batch")
            try provider.apply(changes)
            progress.finish("Imported \(values.count) keys into \(configuration)\(removals > 0 ? ", removed \(removals)" : "").")
        }
    }
}
