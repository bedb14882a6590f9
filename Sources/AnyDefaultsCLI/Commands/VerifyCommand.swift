import AnyDefaults
import AnyDefaultsTesting
import ArgumentParser
import Foundation

struct VerifyCommand: ParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "verify",
        abstract: "Run the conformance checks on a scratch store of the same kind and options.",
        discussion: """
            The store is STORE, else --store, else the store every command uses \
            (ANYDEFAULTS_STORE, the configuration file, the default store); only its kind matters. \
            Its scheme and options (cache=off included) are kept; its location is replaced \
            by scratch storage (a temporary directory, or a unique suite name), removed afterwards, \
            so the store itself is not touched. The checks are those of the AnyDefaultsTesting \
            conformance suite, for the capabilities the backend claims; groups it does not claim \
            are shown as skipped. Exits 0 when every check that ran passed and 1 when any failed. \
            For a scheme of your own, see DefaultsConformanceVerifier in AnyDefaultsTesting.
            """)

    @Argument(help: ArgumentHelp("The store string to verify, e.g. json:prefs.json or sqlite:x.sqlite?durability=full.", valueName: "store"))
    var storeArgument: String?

    @OptionGroup var storeOptions: StoreOptions

    @Option(help: "The seed of the generated keys, values and operations (printed by every run), to reproduce a run.")
    var seed: UInt64?

    func validate() throws {
        if let storeArgument, let option = storeOptions.store, storeArgument != option {
            throw ValidationError("Give the store once: as STORE or with --store.")
        }
    }

    func run() throws {
        var options = DefaultsConformanceSuite.Options()
        if let seed { options.seed = seed }
        let verifier = DefaultsConformanceVerifier(registry: .standard, options: options)
        // The suite runs this same command as its child process for the multi-process checks.
        if ConformanceChild.isRequested { verifier.serveChild() }
        let store = try storeString()
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

    /// The store string to verify: STORE, else `--store`, else the store the other commands
    /// would open (as a store string, so that the checks' child processes get it too).
    func storeString() throws -> String {
        switch (storeArgument, storeOptions.store) {
        case (let argument?, _):
            return argument
        case (nil, let option?):
            return option
        case (nil, nil):
            return try reportingErrors { try storeOptions.configuration().description }
        }
    }
}
