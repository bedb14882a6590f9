// The conformance suite's child process for the built-in backends (Tests/ConformanceTests): opens
// the store that ANYDEFAULTS_CONFORMANCE_STORE names (its {dir} and {id} filled with the group's
// storage) through ProviderRegistry.standard, and serves the suite's requests (see
// ConformanceChild in AnyDefaultsTesting and Docs/Conformance.md).
import AnyDefaults
import AnyDefaultsTesting

DefaultsConformanceVerifier(registry: .standard).serveChild()
