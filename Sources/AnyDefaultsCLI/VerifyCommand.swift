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
            conformance suite, for the capabilities the backend claims; groups it does not claim \
            are shown as skipped. Exits 0 when every check that ran passed and 1 when any failed. \
            For a scheme of your own, see DefaultsConformanceVerifier in AnyDefaultsTesting.
            """)

    @Argument(help: "The store string to verify, e.g. json:prefs.json or sqlite:x.sqlite?durability=full.")
    var store: String

    @Option(help: "The seed of the generated keys, values and operations (printed by every run), to reproduce a run.")
    var seed: UInt64?

    func run() throws {
        var options = DefaultsConformanceSuite.Options()
        if let seed { options.seed = seed }
        let verifier = DefaultsConformanceVerifier(registry: .standard, options: options)
        // The suite runs this same command as its child process for the multi-process checks.
        if ConformanceChild.isRequested { verifier.serveChild() }
        let configuration = try reportingErrors { try ProviderRegistry.standard.validate(StoreConfiguration(parsing: store)) }
        let scratch = try reportingErrors { try ScratchArea(purpose: "verify") }
        defer { scratch.remove() }
        let isSuite = configuration.scheme == "userdefaults"
        let outcome = try reportingErrors {
            try verifier.verify(
                store, output: Console.writeLines, beforeGroup: ScratchArea.checkInterruption,
                cleanup: { storage in if isSuite { ScratchArea.removeSuite(storage.identifier) } },
                // Removed by the suite when the group ends, and by the scratch area if interrupted.
                track: { storage in scratch.track(directory: storage.directory, suite: isSuite ? storage.identifier : nil) })
        }
        if outcome.status != 0 { throw ExitCode(ExitStatus.negative) }
    }
}
