import AnyDefaults
import AnyDefaultsTesting
import Testing
import TestSupport

/// Many namespaces on the one connection of the process, written at once: the answer to a
/// catch-up can be handled before that of a write sent before it, and must not take the write's
/// rows for another client's (the conformance suite's event checks, twelve at a time, failed one
/// run in four before writes and catch-ups were numbered).
@Suite(.ownThreads) struct PostgreSQLSharedConnectionTests {
    @Test(arguments: 0..<12)
    func ownWritesStayLocalWhileNamespacesShareTheConnection(_ run: Int) async throws {
        let suite = DefaultsConformanceSuite(capabilities: [.persistent, .atomicBatch, .multiProcess, .externalChanges]) { storage in
            try PostgreSQLProvider(url: PostgreSQLCluster.shared().storeString(namespace: "shared-\(run)-" + storage.identifier)).cached()
        }
        _ = try await BlockingWork.run { try suite.run(.changeEvents) }
    }
}
