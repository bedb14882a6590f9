import AnyDefaults
import AnyDefaultsTesting
import ArgumentParser
import Foundation

struct VerifyCommand: ParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "verify",
        abstract: "Run the conformance checks on a scratch store of the same kind and options.",
        discussion: """
            STORE's scheme and options (cache=off included) are kept; its location is replaced \
            by scratch storage (a temporary directory, or a unique suite name), removed afterwards, \
            so the store itself is not touched. The checks are those of the AnyDefaultsTesting \
            conformance suite, for the capabilities the backend claims. Exits 0 when every check \
            passes and 1 when any fails.
            """)

    @Argument(help: "The store string to verify, e.g. json:prefs.json or sqlite:x.sqlite?durability=full.")
    var store: String

    func run() throws {
        let configuration = try reportingErrors { try ProviderRegistry.standard.validate(StoreConfiguration(parsing: store)) }
        let scratch = try reportingErrors { try ScratchArea(purpose: "verify") }
        defer { scratch.remove() }
        let capabilities = try reportingErrors { try StoreOptions.open(scratch.place(configuration, name: "probe")).capabilities }
        let isSuite = configuration.scheme == "userdefaults"
        let suite = DefaultsConformanceSuite(
            capabilities: capabilities,
            cleanup: { storage in
                if isSuite { ScratchArea.removeSuite(storage.identifier) }
            },
            open: { storage in
                // Removed by the suite when the group ends, and by the scratch area if interrupted.
                scratch.track(directory: storage.directory, suite: isSuite ? storage.identifier : nil)
                return try StoreOptions.open(
                    ScratchArea.place(configuration, in: storage.directory, name: "store", uniqueName: storage.identifier))
            })
        let shown = StoreConfiguration(scheme: configuration.scheme, options: configuration.options, cache: configuration.cache)
        try Console.writeLines("Verifying \(shown)… on scratch storage; capabilities \(capabilities)\n")
        var failed = 0
        let groups = DefaultsConformanceSuite.Group.allCases
        for group in groups {
            try ScratchArea.checkInterruption()
            do {
                try Console.writeLines("  ✔ \(try suite.run(group))\n")
            } catch let failure as ConformanceFailure {
                failed += 1
                try Console.writeLines("  ✘ \(group): \(failure.items.count) failed check(s)\n")
                try Console.writeLines(failure.items.map { "      \(DefaultsError.printable("\($0)"))\n" }.joined())
            } catch {
                failed += 1
                try Console.writeLines("  ✘ \(group): \(error)\n")
            }
        }
        try Console.writeLines(failed == 0 ? "All groups passed.\n" : "\(failed) of \(groups.count) groups failed.\n")
        if failed > 0 { throw ExitCode(ExitStatus.negative) }
    }
}
