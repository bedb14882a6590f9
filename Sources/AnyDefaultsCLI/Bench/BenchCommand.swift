import AnyDefaults
import ArgumentParser
import Foundation

struct BenchCommand: ParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "bench",
        abstract: "Compare the cost of reads and writes across stores, plain and cached, against UserDefaults.",
        discussion: """
            For each store: the mean cost of a read, a write, a skipped write (writing the value \
            already stored) and a batch writing all KEYS keys, once with cache=off and once with \
            cache=on, next to plain Foundation UserDefaults on a scratch suite (which keeps writes \
            in memory until synchronize(), called once per run of writes), with each ratio to it.
            Default stores: one of every backend, in a scratch directory. A relative path in \
            --stores is placed in that scratch directory, and a store without a location \
            (json:, userdefaults:) gets a scratch one; the scratch directory and suites are \
            removed afterwards. A store given by absolute path or suite name is used as given and \
            must be empty; bench removes exactly the keys it wrote (while they hold what it wrote), \
            never a key another process wrote meanwhile. Progress shows on standard error when it is a terminal.
            """)

    @Option(help: ArgumentHelp("Comma-separated store strings (default: one scratch store per backend).", valueName: "s1,s2,..."))
    var stores: String?
    @Option(help: "How many keys each store holds, and each batch writes.") var keys = 100
    @Option(help: "How many reads, writes and skipped writes each measurement makes.") var ops = 200
    @Flag(help: "Print the results as JSON (nanoseconds per operation) instead of a table.") var json = false

    func validate() throws {
        guard (1...1_000_000).contains(keys) else { throw ValidationError("--keys must be from 1 to 1000000.") }
        guard (1...100_000_000).contains(ops) else { throw ValidationError("--ops must be from 1 to 100000000.") }
        if let stores, stores.split(separator: ",").allSatisfy({ $0.trimmingCharacters(in: .whitespaces).isEmpty }) {
            throw ValidationError("--stores names no store.")
        }
    }

    func run() throws {
        try reportingErrors {
            let scratch = try ScratchArea(purpose: "bench")
            defer { scratch.remove() }
            let subjects = try Self.subjects(stores, in: scratch)
            let report = try BenchReport.measure(
                subjects, with: BenchRunner(keyCount: keys, operationCount: ops), scratch: scratch, progress: ProgressLine("bench"))
            if json {
                try Console.write(report.json())
            } else {
                try Console.writeLines("Mean cost per operation (batch: per batch of \(keys) keys), \(ops) operations each; ratio to UserDefaults in parentheses.\n\n")
                try Console.writeLines(report.table())
            }
        }
    }

    /// The stores to measure: those of `list`, else one scratch store of every registered backend.
    static func subjects(_ list: String?, in scratch: ScratchArea) throws(DefaultsError) -> [BenchReport.Subject] {
        guard let list else {
            var subjects: [BenchReport.Subject] = []
            for entry in ProviderRegistry.standard.registered where !entry.needsServer {
                let configuration = try scratch.place(StoreConfiguration(scheme: entry.scheme), name: "bench")
                subjects.append(BenchReport.Subject(label: "\(entry.scheme):", configuration: configuration))
            }
            return subjects
        }
        var subjects: [BenchReport.Subject] = []
        for (index, item) in list.split(separator: ",").enumerated() {
            let text = item.trimmingCharacters(in: .whitespaces)
            if text.isEmpty { continue }
            var configuration = try StoreConfiguration(parsing: text, baseDirectory: scratch.directory.path)
            if configuration.location.isEmpty {
                configuration = try scratch.place(configuration, name: "bench-\(index)")
            } else {
                configuration = try ProviderRegistry.standard.validate(configuration)
            }
            // The label is shown in a table: a control character must not break its row.
            subjects.append(BenchReport.Subject(label: DefaultsError.printable(text), configuration: configuration))
        }
        return subjects
    }
}
