import AnyDefaultsCore
import Foundation

import AnyDefaultsPlatform

/// Runs the conformance suite on scratch storage of the kind a store string names, from the
/// command line: what `anydefaults verify` does, for any ``ProviderRegistry`` — so a scheme you
/// register yourself can be verified too.
///
/// A verify tool for your scheme is one executable target whose `main.swift` registers the scheme
/// and hands over:
///
/// ```swift
/// import AnyDefaults          // ProviderRegistry.standard, with the built-in backends
/// import AnyDefaultsTesting
/// import RedisDefaults
///
/// ProviderRegistry.standard.register(scheme: "redis", summary: "a Redis hash", location: .required("HOST:PORT/HASH")) { configuration in
///     try RedisProvider(address: configuration.location)
/// }
/// DefaultsConformanceVerifier.main(registry: .standard)
/// ```
///
/// `swift run verify-redis 'redis:localhost:6379/{id}'` then runs every group. The store's scheme
/// and options are kept and its location replaced by scratch storage: `{id}` becomes a unique
/// name and `{dir}` a fresh temporary directory wherever they appear; without them a path
/// location becomes a file in the temporary directory and a name becomes a unique name. The tool
/// is its own child process for the multi-process, crash and restart groups.
public struct DefaultsConformanceVerifier: Sendable {
    /// The environment variable that carries the store string to a child process: a child
    /// executable that calls ``serveChild()`` opens the store it names.
    public static let storeVariable = "ANYDEFAULTS_CONFORMANCE_STORE"

    /// The registry that opens the stores.
    public let registry: ProviderRegistry
    /// The suite's options (seed, stress, timeout).
    public var options: DefaultsConformanceSuite.Options

    public init(registry: ProviderRegistry, options: DefaultsConformanceSuite.Options = .init()) {
        self.registry = registry
        self.options = options
    }

    /// What a verification found.
    public struct Outcome: Sendable {
        /// Every group's report, passed or skipped, in order.
        public var reports: [ConformanceReport]
        /// Every failure, one per failed group.
        public var failures: [ConformanceFailure]
        /// 0 when no check failed, 1 when one did.
        public var status: Int32 { failures.isEmpty ? 0 : 1 }
    }

    /// The suite for `store`: providers opened through the registry on scratch storage.
    ///
    /// - Parameters:
    ///   - store: A store string, for example `sqlite:x.sqlite?durability=full` or `redis:host:6379/{id}`.
    ///   - capabilities: What the backend claims; by default what its provider reports.
    ///   - child: The executable to run the provider in for the groups that need other processes;
    ///     by default this executable itself, with the same arguments.
    ///   - cleanup: Removes storage a group left outside its directory (a named store).
    ///   - track: Told of each storage before it is used, so that an interrupted run can remove it.
    public func suite(
        for store: String, capabilities: DefaultsCapabilities? = nil, child: DefaultsConformanceSuite.ChildProcess? = nil,
        cleanup: DefaultsConformanceSuite.Cleanup? = nil,
        track: @escaping @Sendable (ConformanceStorage) -> Void = { _ in }
    ) throws(DefaultsError) -> DefaultsConformanceSuite {
        _ = try registry.validate(StoreConfiguration(parsing: Self.placeholdersFilled(store, directory: "/tmp", identifier: "check")))
        let registry = registry
        let child = child ?? .currentExecutable(arguments: Array(CommandLine.arguments.dropFirst()), environment: [Self.storeVariable: store])
        return DefaultsConformanceSuite(capabilities: capabilities, options: options, child: child, cleanup: cleanup) { storage in
            track(storage)
            return try registry.makeProvider(Self.place(store, in: storage, registry: registry))
        }
    }

    /// Runs every group on `store`, printing a line per group (and every failed check) through
    /// `output`. `beforeGroup` runs before each group (to stop an interrupted run by throwing).
    public func verify(
        _ store: String, output: (String) throws -> Void, beforeGroup: () throws -> Void = {}, cleanup: DefaultsConformanceSuite.Cleanup? = nil,
        track: @escaping @Sendable (ConformanceStorage) -> Void = { _ in }
    ) throws -> Outcome {
        let suite = try self.suite(for: store, cleanup: cleanup, track: track)
        // One store opened first, so that a store string the backend refuses (an option's value,
        // say) fails with the backend's error, not with a failed check in every group.
        let probe = try suite.makeStorage("probe")
        defer { suite.removeStorage(probe) }
        track(probe)
        _ = try registry.makeProvider(Self.place(store, in: probe, registry: registry))
        var shown = try StoreConfiguration(parsing: Self.placeholdersFilled(store, directory: "", identifier: ""))
        shown.location = ""
        try output("Verifying \(shown)… on scratch storage; capabilities \(suite.capabilities); seed \(options.seed)\n")
        var outcome = Outcome(reports: [], failures: [])
        for group in DefaultsConformanceSuite.Group.allCases {
            try beforeGroup()
            do {
                let report = try suite.report(group)
                outcome.reports.append(report)
                if let reason = report.skippedBecause {
                    try output("  – \(group): skipped (\(reason))\n")
                } else {
                    try output("  ✔ \(report) (\(String(format: "%.1f", report.seconds)) s)\n")
                }
            } catch let failure as ConformanceFailure {
                outcome.failures.append(failure)
                try output("  ✘ \(group): \(failure.items.count) failed check(s)\n")
                try output(failure.items.map { "      \($0)\n" }.joined())
            }
        }
        let skipped = outcome.reports.filter(\.isSkipped).count
        let ran = DefaultsConformanceSuite.Group.allCases.count - skipped
        if outcome.failures.isEmpty {
            try output(skipped == 0 ? "All groups passed.\n" : "All \(ran) groups that ran passed; \(skipped) skipped.\n")
        } else {
            try output("\(outcome.failures.count) of \(ran) groups that ran failed\(skipped > 0 ? "; \(skipped) skipped" : ""). Seed \(options.seed): rerun with \(DefaultsConformanceSuite.Options.seedVariable)=\(options.seed).\n")
        }
        return outcome
    }

    /// Serves the suite as its child process (see ``ConformanceChild``) for the store string the
    /// suite passed down; call it when ``ConformanceChild/isRequested``.
    public func serveChild() -> Never {
        let store = ProcessInfo.processInfo.environment[Self.storeVariable] ?? ""
        let registry = registry
        ConformanceChild.main { storage in try registry.makeProvider(Self.place(store, in: storage, registry: registry)) }
    }

    /// A complete verify tool: `TOOL STORE` verifies STORE and exits with 0 when every check
    /// passed, 1 when one failed and 64 for a bad store string; as a child process it serves the
    /// suite. `--seed N` reproduces a run and `--stress thorough` (or a factor) runs longer.
    public static func main(registry: ProviderRegistry, arguments: [String] = Array(CommandLine.arguments.dropFirst())) -> Never {
        var options = DefaultsConformanceSuite.Options()
        if ConformanceChild.isRequested { DefaultsConformanceVerifier(registry: registry, options: options).serveChild() }
        var store: String?
        var rest = arguments[...]
        while let argument = rest.popFirst() {
            switch argument {
            case "--seed":
                guard let seed = rest.popFirst().flatMap(UInt64.init) else { usage("--seed needs a number") }
                options.seed = seed
            case "--stress":
                guard let text = rest.popFirst() else { usage("--stress needs thorough or a factor") }
                if text == "thorough" { options.stress = .thorough } else if let factor = Int(text), factor > 0 {
                    options.stress = options.stress.scaled(by: factor)
                } else { usage("--stress needs thorough or a factor") }
            case "-h", "--help": usage(nil)
            default:
                guard store == nil else { usage("one store string only") }
                store = argument
            }
        }
        guard let store else { usage("a store string is needed") }
        let verifier = DefaultsConformanceVerifier(registry: registry, options: options)
        do {
            let outcome = try verifier.verify(store) { text in FileHandle.standardOutput.write(Data(text.utf8)) }
            exit(outcome.status)
        } catch {
            FileHandle.standardError.write(Data("\(error)\n".utf8))
            exit(64)
        }
    }

    private static func usage(_ problem: String?) -> Never {
        let name = (CommandLine.arguments.first as NSString?)?.lastPathComponent ?? "verify"
        let text = """
            \(problem.map { "error: \($0)\n" } ?? "")usage: \(name) STORE [--seed N] [--stress thorough|FACTOR]
              Runs the AnyDefaults conformance suite on scratch storage of STORE's kind. In STORE, {id} becomes
              a unique name and {dir} a temporary directory; without them the location is replaced by scratch storage.

            """
        FileHandle.standardError.write(Data(text.utf8))
        exit(problem == nil ? 0 : 64)
    }

    /// `store` with `{dir}` and `{id}` filled in.
    static func placeholdersFilled(_ store: String, directory: String, identifier: String) -> String {
        store.replacingOccurrences(of: "{dir}", with: directory).replacingOccurrences(of: "{id}", with: identifier)
    }

    /// `store` moved onto `storage`: placeholders filled, else a path location replaced by a file
    /// in the storage directory and a name by the storage's unique identifier. Scheme and options
    /// are kept. A server's store string needs `{id}` (`postgres://db.local/app?namespace={id}`).
    public static func place(_ store: String, in storage: ConformanceStorage, registry: ProviderRegistry) throws(DefaultsError) -> StoreConfiguration {
        if store.contains("{dir}") || store.contains("{id}") {
            return try registry.validate(StoreConfiguration(parsing: placeholdersFilled(store, directory: storage.directory.path, identifier: storage.identifier)))
        }
        var configuration = try StoreConfiguration(parsing: store)
        guard let entry = registry.registered.first(where: { $0.scheme == configuration.scheme }) else {
            return try registry.validate(configuration)
        }
        switch entry.location {
        case .none: configuration.location = ""
        case .path: configuration.location = storage.directory.appendingPathComponent("store.\(configuration.scheme)").path
        case .optional, .required: configuration.location = storage.identifier
        case .server(let hint):
            // A server cannot be made up: the store string names it, and `{id}` where each group's
            // store goes (a namespace, a database).
            throw DefaultsError(
                .invalidConfiguration,
                "\(configuration.scheme): needs a server (\(hint)) and {id} where each check's store goes, e.g. in a namespace option.",
                backend: "Configuration")
        }
        return try registry.validate(configuration)
    }
}
