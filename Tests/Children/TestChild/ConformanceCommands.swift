import AnyDefaults
import AnyDefaultsTesting
import BrokenProviders

// The conformance suite's child process (see ConformanceChild in AnyDefaultsTesting and
// Docs/Conformance.md): the suite starts it and talks to it over standard input and output.

/// Serves the store that ANYDEFAULTS_CONFORMANCE_STORE names (its {dir} and {id} filled with the
/// group's storage), opened through `ProviderRegistry.standard`.
func conformance(_ arguments: Arguments) throws -> Never {
    try arguments.expect(0...0)
    DefaultsConformanceVerifier(registry: .standard).serveChild()
}

/// Serves a deliberately broken provider (Tests/BrokenProviders) with the defect named, on the
/// group's storage directory, for the suite's own tests.
func conformanceBroken(_ arguments: Arguments) throws -> Never {
    try arguments.expect(1...1)
    let name = try arguments.text(0, "defect")
    guard let defect = Defect(rawValue: name) else { throw Usage(description: "conformance-broken: unknown defect \(name)") }
    ConformanceChild.main { storage in try BrokenFileProvider(defect, directory: storage.directory) }
}
