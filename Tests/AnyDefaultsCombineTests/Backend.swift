import AnyDefaultsCombine
import Foundation
import Synchronization
import Testing
import TestSupport

/// A built-in backend as these tests open it: a fresh store in a temporary directory (a unique
/// suite for `userdefaults:`), removed afterwards.
struct Backend: Sendable, CustomTestStringConvertible {
    let name: String
    /// The store string, with `{dir}` for the temporary directory and `{suite}` for a unique name.
    let template: String

    var testDescription: String { name }

    init(_ backend: TestBackend) {
        name = backend.name
        template = backend.store(in: "{dir}", name: "settings", suite: "{suite}")
    }

    /// Every backend (the catalog, TestBackend.all).
    static let all = TestBackend.all.map(Backend.init)

    /// The backends that report changes made by other processes on this platform.
    static let reportingOtherProcesses = TestBackend.reportingOtherProcesses.map(Backend.init)

    /// The backends whose values outlive the process.
    static let persistent = TestBackend.persistent.map(Backend.init)

    /// Opens a fresh store (behind a cache unless `cached` is false), runs `body` with it and its
    /// store string (for other processes or a second "launch"), and removes what it left.
    func withStore<T>(
        cached: Bool = true, errors: ErrorLog? = nil, _ body: (Defaults, String) throws -> T
    ) throws -> T {
        try withLocation { configuration in try body(open(configuration, cached: cached, errors: errors), configuration) }
    }

    /// The async form of ``withStore(cached:errors:_:)``.
    func withStore<T>(
        cached: Bool = true, errors: ErrorLog? = nil, _ body: (Defaults, String) async throws -> T
    ) async throws -> T {
        try await withTemporaryDirectory { directory in
            let suite = "anydefaults-combine-\(UUID().uuidString)"
            defer { try? UserDefaultsProvider.removeSuite(named: suite) }
            let configuration = configuration(in: directory, suite: suite)
            return try await body(open(configuration, cached: cached, errors: errors), configuration)
        }
    }

    /// Runs `body` with the store string of a fresh store, and removes what the store left;
    /// `body` opens it (with ``open(_:cached:errors:)``) and must let go of it before returning.
    func withLocation<T>(_ body: (String) throws -> T) throws -> T {
        try withTemporaryDirectory { directory in
            let suite = "anydefaults-combine-\(UUID().uuidString)"
            defer { try? UserDefaultsProvider.removeSuite(named: suite) }
            return try body(configuration(in: directory, suite: suite))
        }
    }

    private func configuration(in directory: TemporaryDirectory, suite: String) -> String {
        template.replacingOccurrences(of: "{dir}", with: directory.path).replacingOccurrences(of: "{suite}", with: suite)
    }

    /// Opens `configuration` again, as another launch of the program would.
    func open(_ configuration: String, cached: Bool = true, errors: ErrorLog? = nil) throws -> Defaults {
        let text = cached ? configuration : configuration + "?cache=off"
        if let errors {
            return try Defaults(url: text, errorHandler: { errors.record($0) })
        }
        return try Defaults(url: text)
    }

    /// Runs TestChild, another process, which makes each of `writes` one write
    /// (`key=7` sets `.int(7)`, `-key` removes) to the store `configuration` names.
    static func writeFromAnotherProcess(_ configuration: String, _ writes: [String]) throws {
        let result = try ChildProcess.run("TestChild", ["apply", configuration] + writes)
        #expect(result.status == 0, "\(result.standardError)")
    }
}

/// The errors a store reported.
typealias ErrorLog = Recorder<DefaultsError>
