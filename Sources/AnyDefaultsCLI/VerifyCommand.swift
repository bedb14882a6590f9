import AnyDefaults
import AnyDefaultsTesting
import ArgumentParser
import Foundation

struct VerifyCommand: ParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "verify",
        abstract: "Run the conformance checks on a scratch store of the same kind and options.",
        discussion: """
            STORE's scheme and options are kept; its location is replaced by a scratch location \
            (a temporary directory, or a unique suite name), so the store itself is not touched. \
            Exits 0 when every check passes and 1 when any fails.
            """)

    @Argument(help: "The store string to verify, e.g. sqlite:/tmp/x.sqlite?durability=full.") var store: String

    func run() throws {
        let configuration = try reportingErrors { try StoreConfiguration(parsing: store) }
        let entry = try reportingErrors { () throws -> ProviderRegistry.Entry in
            guard let entry = ProviderRegistry.standard.registered.first(where: { $0.scheme == configuration.scheme }) else {
                _ = try ProviderRegistry.standard.validate(configuration)  // throws the unknown-scheme error
                throw DefaultsError(.invalidConfiguration, "Unknown scheme.", backend: "anydefaults")
            }
            return entry
        }
        let probe = try reportingErrors { try StoreOptions.open(scratch(configuration, entry, in: FileManager.default.temporaryDirectory, identifier: "probe-\(UUID().uuidString)")) }
        let suite = DefaultsConformanceSuite(capabilities: probe.capabilities, cleanup: { storage in
            if case .optional = entry.location { try? removeScratchSuite(storage.identifier) }
        }) { storage in
            try StoreOptions.open(scratch(configuration, entry, in: storage.directory, identifier: storage.identifier))
        }
        if case .optional = entry.location { try? removeScratchSuite("probe") }
        print("Verifying \(configuration.scheme): (capabilities \(probe.capabilities)) on scratch storage")
        var failed = 0
        let groups: [(String, () throws -> ConformanceReport)] = [
            ("roundTrips", suite.roundTrips), ("typeFidelity", suite.typeFidelity), ("keys", suite.keys),
            ("removal", suite.removal), ("batches", suite.batches), ("persistence", suite.persistence),
            ("concurrency", suite.concurrency), ("changeEvents", suite.changeEvents), ("errors", suite.errors),
        ]
        for (name, run) in groups {
            do {
                print("  ✔ \(try run())")
            } catch let failure as ConformanceFailure {
                failed += 1
                print("  ✘ \(name): \(failure.items.count) failed check(s)")
                for item in failure.items { print("      \(item)") }
            } catch {
                failed += 1
                print("  ✘ \(name): \(error)")
            }
        }
        print(failed == 0 ? "All groups passed." : "\(failed) group(s) failed.")
        if failed > 0 { throw ExitCode(1) }
    }

    /// The configuration with its location moved to scratch storage.
    private func scratch(_ configuration: StoreConfiguration, _ entry: ProviderRegistry.Entry, in directory: URL, identifier: String) -> StoreConfiguration {
        var scratch = configuration
        switch entry.location {
        case .none: scratch.location = ""
        case .path: scratch.location = directory.appendingPathComponent("store").path
        case .optional, .required: scratch.location = "anydefaults-verify.\(identifier)"
        }
        return scratch
    }
}

/// Removes a scratch UserDefaults suite's file (Foundation on Linux keeps it under XDG_CONFIG_HOME).
private func removeScratchSuite(_ identifier: String) throws {
    let base = ProcessInfo.processInfo.environment["XDG_CONFIG_HOME"] ?? (NSHomeDirectory() + "/.config")
    try? FileManager.default.removeItem(atPath: base + "/anydefaults-verify.\(identifier).plist")
    UserDefaults().removePersistentDomain(forName: "anydefaults-verify.\(identifier)")
}
