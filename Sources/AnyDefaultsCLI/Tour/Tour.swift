import AnyDefaults
import Dispatch
import Foundation
import Synchronization

/// The steps of `anydefaults tour`: each prints what it does, the Swift that does it, and what
/// came out, on scratch stores of every registered backend.
struct Tour {
    let scratch: ScratchArea

    /// The settings the tour writes, as the typed API writes them and as they are stored.
    private static let settings: [(key: String, swift: String, write: @Sendable (ThrowingDefaults) throws -> Void, stored: DefaultsValue)] = [
        ("ui.theme", #"set("dark", forKey: "ui.theme")"#, { try $0.set("dark", forKey: "ui.theme") }, .string("dark")),
        ("launchCount", #"set(3, forKey: "launchCount")"#, { try $0.set(3, forKey: "launchCount") }, .int(3)),
        ("volume", #"set(0.8, forKey: "volume")"#, { try $0.set(0.8, forKey: "volume") }, .double(0.8)),
        ("onboarded", #"set(true, forKey: "onboarded")"#, { try $0.set(true, forKey: "onboarded") }, .bool(true)),
        ("one.double", #"set(1.0, forKey: "one.double")"#, { try $0.set(1.0, forKey: "one.double") }, .double(1)),
        ("balance", #"set(-0.0, forKey: "balance")"#, { try $0.set(-0.0, forKey: "balance") }, .double(-0.0)),
        ("lastSync", #"set(Date(timeIntervalSinceReferenceDate: 800_000_000.125), forKey: "lastSync")"#,
         { try $0.set(Date(timeIntervalSinceReferenceDate: 800_000_000.125), forKey: "lastSync") },
         .date(Date(timeIntervalSinceReferenceDate: 800_000_000.125))),
        ("avatar", #"set(Data([0xCA, 0xFE]), forKey: "avatar")"#, { try $0.set(Data([0xCA, 0xFE]), forKey: "avatar") }, .data(Data([0xCA, 0xFE]))),
        ("recent", #"set(["a.txt", "b.txt"], forKey: "recent")"#, { try $0.set(["a.txt", "b.txt"], forKey: "recent") },
         .array([.string("a.txt"), .string("b.txt")])),
    ]

    func run() throws {
        let clock = ContinuousClock()
        let start = clock.now
        try say("""
            AnyDefaults: a UserDefaults-style settings store over any backend.
            This tour uses scratch storage only (\(scratch.directory.path) and scratch
            UserDefaults suites), removed when it ends.
            """)
        let stores = try chooseByConfiguration()
        let json = try writeAndRead(stores)
        try cache(json)
        try externalChange(json)
        try move(stores)
        try compare()
        try say("""

            Done in \(String(format: "%.1f", (clock.now - start).inSeconds)) s; the scratch storage is removed. Next, on a store of your own:
              anydefaults --store json:~/prefs.json write ui.theme dark
              anydefaults --store json:~/prefs.json read ui.theme
              anydefaults --store json:~/prefs.json watch          (then write from another terminal)
              anydefaults --store json:~/prefs.json export --format plist --output prefs.plist
              anydefaults bench
              anydefaults --help
            """)
    }

    // MARK: Steps

    /// Lists the registered backends and places one scratch store of each.
    private func chooseByConfiguration() throws -> [(scheme: String, configuration: StoreConfiguration)] {
        try heading(1, "Choose a backend by configuration")
        try say("""
            One string names a store: SCHEME:LOCATION?OPTIONS. The standard registry knows these:
            """)
        let entries = ProviderRegistry.standard.registered
        try say(TextTable(["store string", "what it is"], rows: entries.map { [Self.form($0), $0.summary] }).render(indent: 2))
        let options = entries.filter { !$0.options.isEmpty }.map { "\($0.scheme): \($0.options.map(\.name).joined(separator: ", "))" }
        try say("\n  Options follow a '?': \((options + ["any store: cache=on|off", "a store in a file: journal=on|off, journalsize=bytes"]).joined(separator: "; ")).")
        var stores: [(scheme: String, configuration: StoreConfiguration)] = []
        // A store on a server (postgres:) needs one running: Docs/Backends.md shows it with several processes.
        for entry in entries where !entry.needsServer {
            stores.append((entry.scheme, try scratch.place(StoreConfiguration(scheme: entry.scheme), name: "tour")))
        }
        let example = stores.first { $0.scheme == "json" }?.configuration.description ?? "memory:"
        try say("""

              let store = try ProviderRegistry.standard.makeProvider("\(example)")
            The same string can come from ANYDEFAULTS_STORE, a JSON configuration file, or --store here.
            """)
        return stores
    }

    /// Writes the same settings through the typed API on every store and reads them back.
    /// Returns the JSON store, used by the next steps.
    private func writeAndRead(_ stores: [(scheme: String, configuration: StoreConfiguration)]) throws -> StoreConfiguration {
        try heading(2, "Write and read the same settings on every backend")
        try say("  let defaults = Defaults(store)       // typed, UserDefaults-shaped, cached")
        for setting in Self.settings { try say("  try defaults.throwing.\(setting.swift)") }
        try say("")
        var rows: [[String]] = []
        for (scheme, configuration) in stores {
            let provider = try StoreOptions.open(configuration)
            let defaults = facade(provider)
            for setting in Self.settings { try setting.write(defaults.throwing) }
            var exact = 0
            for setting in Self.settings where try defaults.throwing.value(forKey: setting.key) == setting.stored { exact += 1 }
            rows.append(["\(scheme):", "\(exact) of \(Self.settings.count) exact", "\(defaults.provider.capabilities)"])
        }
        try say(TextTable(["backend", "read back", "capabilities"], rows: rows).render(indent: 2))
        guard let json = stores.first(where: { $0.scheme == "json" })?.configuration else {
            throw CommandFailure(ExitStatus.software, "the json: backend is not registered")
        }
        let file = (try? String(contentsOfFile: json.location, encoding: .utf8)) ?? ""
        try say("""

            Types never blur: 3, 1.0 and true stay an int, a double and a bool; -0.0 keeps its sign and
            the date its fraction of a second. The json: store is a file you can read and edit:

            """)
        try say(file.split(separator: "\n").map { "  " + $0 }.joined(separator: "\n"))
        return json
    }

    /// Reads one key many times and rewrites its value through the cache, then shows the statistics.
    private func cache(_ json: StoreConfiguration) throws {
        try heading(3, "The cache")
        let provider = try StoreOptions.open(json)
        let defaults = facade(provider)
        for _ in 0..<1_000 { _ = try defaults.throwing.value(forKey: "ui.theme") }
        for _ in 0..<10 { try defaults.throwing.set("dark", forKey: "ui.theme") }
        try defaults.throwing.set("light", forKey: "ui.theme")
        try say("""
              for _ in 0..<1_000 { _ = defaults.string(forKey: "ui.theme") }
              for _ in 0..<10 { defaults.set("dark", forKey: "ui.theme") }   // already stored
              defaults.set("light", forKey: "ui.theme")
              print(defaults.statistics!)
            \(defaults.statistics.map { "  → \($0)" } ?? "  (no cache)")
            A cached read costs a lock and a lookup; a write of the value already stored is skipped.
            """)
    }

    /// Lets another process write to the JSON store and shows the event this process receives.
    private func externalChange(_ json: StoreConfiguration) throws {
        try heading(4, "Changes from other processes")
        let provider = try StoreOptions.open(json)
        guard provider.capabilities.contains(.externalChanges), let executable = Bundle.main.executableURL else {
            try say("  (json: does not report external changes here; skipped)")
            return
        }
        let heard = Mutex<DefaultsChangeEvent?>(nil)
        let signal = DispatchSemaphore(value: 0)
        let observation = provider.observe { event in
            guard event.key == "ui.theme" else { return }
            heard.withLock { $0 = event }
            signal.signal()
        }
        defer { observation.cancel() }
        let child = Process()
        child.executableURL = executable
        child.arguments = ["write", "--store", json.description, "ui.theme", "solarized"]
        try? child.run()
        child.waitUntilExit()
        _ = signal.wait(timeout: .now() + 3)
        try say("  $ anydefaults --store \(json) write ui.theme solarized     (another process)")
        if let event = heard.withLock({ $0 }) {
            let value = event.newValue.map { ExactJSON.string(from: $0) } ?? "(removed)"
            try say("  → this process heard: ui.theme = \(value) (origin: \(event.origin))")
            try say("  store.changes() / store.observe { } and `anydefaults watch` report such changes.")
        } else {
            try say("  → no event within 3 s (the child exited with status \(child.terminationStatus))")
        }
    }

    /// Exports the JSON store and imports it into every other backend, checking they are identical.
    private func move(_ stores: [(scheme: String, configuration: StoreConfiguration)]) throws {
        try heading(5, "Move settings between backends")
        guard let source = stores.first(where: { $0.scheme == "json" }) else { return }
        let values = try StoreOptions.open(source.configuration).allValues()
        let export = ExportFormat.plist.encode(values)
        var rows: [[String]] = []
        for (scheme, configuration) in stores where scheme != "json" {
            let destination = try StoreOptions.open(configuration)
            let imported = try ExportFormat.plist.decode(export)
            try destination.apply(destination.keys().filter { imported[$0] == nil }.map { .remove($0) } + imported.map { .set($0.key, $0.value) })
            rows.append(["\(scheme):", try destination.allValues() == values ? "identical (\(values.count) keys)" : "DIFFERENT"])
        }
        try say("""
              anydefaults --store json:… export --format plist --output prefs.plist
              anydefaults --store OTHER import --replace prefs.plist       (one atomic batch)

            """)
        try say(TextTable(["into", "result"], rows: rows).render(indent: 2))
    }

    /// A small `bench` over every backend.
    private func compare() throws {
        try heading(6, "A quick comparison (anydefaults bench --keys 50 --ops 100)")
        let area = try ScratchArea(purpose: "tour-bench")
        defer { area.remove() }
        let subjects = try BenchCommand.subjects(nil, in: area)
        let report = try BenchReport.measure(
            subjects, with: BenchRunner(keyCount: 50, operationCount: 100), scratch: area, progress: ProgressLine("tour"))
        try say("Mean cost per operation (batch: 50 keys); ratio to plain Foundation UserDefaults in parentheses.\n")
        try say(report.table(indent: 2))
        try say("""
            A durable write costs what the backend's file format and the disk cost (json: and
            userdefaults: rewrite and flush a whole file); the cache makes reads and skipped writes
            cheap on every backend. Run `anydefaults bench` for more operations.
            """)
    }

    /// How a scheme's store string is written, without its options: `json:PATH`, `userdefaults:[SUITE]`.
    private static func form(_ entry: ProviderRegistry.Entry) -> String {
        switch entry.location {
        case .none: "\(entry.scheme):"
        case .path(let hint), .required(let hint), .server(let hint): "\(entry.scheme):\(hint)"
        case .optional(let hint): "\(entry.scheme):[\(hint)]"
        }
    }

    /// The typed facade over a store (opening the existential for `Defaults.init`).
    private func facade<Provider: DefaultsProvider>(_ provider: Provider) -> Defaults {
        Defaults(provider)
    }

    // MARK: Output

    private func heading(_ number: Int, _ title: String) throws {
        try ScratchArea.checkInterruption()
        try say("\n\(number). \(title)")
    }

    private func say(_ text: String) throws(CommandFailure) {
        try Console.writeLines(text.hasSuffix("\n") ? text : text + "\n")
    }
}
