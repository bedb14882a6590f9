import AnyDefaults
import Foundation
import TestSupport

/// The built-in stores (the catalog, TestBackend.all) by store string, plain and cached, for tests
/// of one behaviour on each.
enum EveryBackend {
    static let stores = TestBackend.all.map { $0.store(in: "{dir}", suite: "{suite}") }
    static let variants = stores.flatMap { [$0 + "?cache=off", $0 + "?cache=on"] }
    /// The stores whose instances, opened twice on one location, share the data.
    static let shared = variants.filter { !$0.hasPrefix("memory:") }

    /// Opens the store `template` names in a fresh directory (a unique suite for userdefaults:),
    /// gives `body` a way to open it (again), and removes what the store left.
    static func with(_ template: String, _ body: (_ open: () throws -> any DefaultsProvider) throws -> Void) throws {
        try withTemporaryDirectory { directory in
            let suite = TestBackend.uniqueSuite("every")
            defer { try? UserDefaultsProvider.removeSuite(named: suite) }
            let text = template.replacingOccurrences(of: "{dir}", with: directory.path).replacingOccurrences(of: "{suite}", with: suite)
            try body { try ProviderRegistry.standard.makeProvider(text) }
        }
    }

    /// ``with(_:_:)`` giving `body` the store string itself, for a child process to open.
    static func with(_ template: String, _ body: (_ text: String) async throws -> Void) async throws {
        try await withTemporaryDirectory { directory in
            let suite = TestBackend.uniqueSuite("every")
            defer { try? UserDefaultsProvider.removeSuite(named: suite) }
            try await body(template.replacingOccurrences(of: "{dir}", with: directory.path).replacingOccurrences(of: "{suite}", with: suite))
        }
    }
}
