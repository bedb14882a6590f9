import AnyDefaultsCore
import Foundation
import Testing
import TestSupport

@Suite struct StoreConfigurationTests {
    @Test func parsesSchemeLocationAndOptions() throws {
        let configuration = try StoreConfiguration(parsing: " SQLite:/var/lib/app/prefs.sqlite?durability=FULL&cache=off ")
        #expect(configuration.scheme == "sqlite")
        #expect(configuration.location == "/var/lib/app/prefs.sqlite")
        #expect(configuration.options == ["durability": "FULL"])
        #expect(configuration.cache == false)
    }

    @Test func acceptsEmptyLocationsTripleSlashAndEscapes() throws {
        #expect(try StoreConfiguration(parsing: "memory:").location == "")
        #expect(try StoreConfiguration(parsing: "memory:").cache == true)
        #expect(try StoreConfiguration(parsing: "json:///tmp/a.json").location == "/tmp/a.json")
        let escaped = try StoreConfiguration(parsing: "json:/tmp/what%3F%25.json?note=a%26b")
        #expect(escaped.location == "/tmp/what?%.json")
        #expect(escaped.options["note"] == "a&b")
    }

    @Test func descriptionParsesBackToTheSameConfiguration() throws {
        for text in ["memory:", "json:/tmp/what%3F%25 x.json?note=a%26b%3Dc", "lmdb:rel/dir?mapsize=64MiB&cache=off", "userdefaults:com.example.app"] {
            let configuration = try StoreConfiguration(parsing: text)
            #expect(try StoreConfiguration(parsing: configuration.description) == configuration, "\(text) -> \(configuration)")
        }
    }

    @Test(arguments: [
        ("", "empty"),
        ("sqlite", "names no scheme"),
        ("1sqlite:/x", "not a valid scheme"),
        ("sq lite:/x", "not a valid scheme"),
        ("json:/x?cache=maybe", "use on or off"),
        ("json:/x?mode", "has no value"),
        ("json:/x?a=1&a=2", "given twice"),
        ("json:/x?cache=off&cache=on", "given twice"),
        ("json:/x%zz", "not followed by two hex digits"),
    ])
    func rejectsMalformedStrings(text: String, says: String) {
        do {
            _ = try StoreConfiguration(parsing: text)
            Issue.record("\(text.debugDescription) was accepted")
        } catch {
            #expect(error.code == .invalidConfiguration)
            #expect(error.message.contains(says), "\(error.message)")
        }
    }

    /// `SCHEME://AUTHORITY/PATH` parses, keeping the authority as written; only a scheme registered
    /// with a server location accepts one, and a local scheme still refuses a host.
    @Test func serverAuthoritiesParseAndOnlyServerSchemesAcceptThem() throws {
        let parsed = try StoreConfiguration(parsing: "pg://app%40corp@[::1]:5433/settings%20db?namespace=a&cache=off")
        #expect(parsed.authority == "app%40corp@[::1]:5433")
        #expect(parsed.location == "/settings db")
        #expect(parsed.options == ["namespace": "a"])
        #expect(try StoreConfiguration(parsing: parsed.description) == parsed)
        #expect(try StoreConfiguration(parsing: "pg://host").location == "")
        #expect(try StoreConfiguration(parsing: "pg:///run/pg").authority == nil)

        let registry = ProviderRegistry()
        registry.register(
            scheme: "pg", summary: "a server", location: .server("//HOST/DB or SOCKETDIR"),
            options: [StoreOption("namespace", values: "name", summary: "a store")]
        ) { _ in TestProvider() }
        registry.register(scheme: "file", summary: "a file", location: .path("PATH")) { _ in TestProvider() }
        #expect(try registry.validate(parsed).authority == "app%40corp@[::1]:5433")
        #expect(try registry.validate(StoreConfiguration(parsing: "pg:/run/pg/../pg")).location == "/run/pg")
        for (text, says) in [("file://host/x", "names a host"), ("pg:", "needs a server")] {
            #expect { try registry.validate(StoreConfiguration(parsing: text)) } throws: {
                ($0 as? DefaultsError)?.code == .invalidConfiguration && ($0 as? DefaultsError)?.message.contains(says) == true
            }
        }
        #expect(registry.registered.first { $0.scheme == "pg" }?.needsServer == true)
        #expect(registry.registered.first { $0.scheme == "file" }?.needsServer == false)
    }

    @Test func resolvesHomeAndRelativePaths() throws {
        let home = try StoreConfiguration(parsing: "json:~/prefs.json").resolvedPath
        #expect(home == URL(fileURLWithPath: ProcessInfo.processInfo.environment["HOME"] ?? "/").appendingPathComponent("prefs.json").standardizedFileURL.path)
        let relative = try StoreConfiguration(parsing: "json:sub/../prefs.json", baseDirectory: "/srv/app").resolvedPath
        #expect(relative == "/srv/app/prefs.json")
        let cwd = try StoreConfiguration(parsing: "json:prefs.json").resolvedPath
        #expect(cwd == URL(fileURLWithPath: FileManager.default.currentDirectoryPath).appendingPathComponent("prefs.json").standardizedFileURL.path)
    }

    @Test func typedOptionsParseAndRejectWithTheAcceptedValues() throws {
        let configuration = try StoreConfiguration(parsing: "x:?size=64MiB&small=512k&plain=4096&mode=Full&flag=yes&n=7&bad=12XB")
        #expect(try configuration.byteCountOption("size", default: 0) == 64 << 20)
        #expect(try configuration.byteCountOption("small", default: 0) == 512 << 10)
        #expect(try configuration.byteCountOption("plain", default: 0) == 4096)
        #expect(try configuration.byteCountOption("absent", default: 9) == 9)
        #expect(try configuration.option("mode", choices: ["normal": 1, "full": 2], default: 0) == 2)
        #expect(try configuration.boolOption("flag", default: false))
        #expect(try configuration.intOption("n", in: 1...10, default: 0) == 7)
        #expect { try configuration.byteCountOption("bad", default: 0) } throws: { ($0 as? DefaultsError)?.message.contains("64MiB") == true }
        #expect { try configuration.intOption("n", in: 1...5, default: 0) } throws: { ($0 as? DefaultsError)?.message.contains("1 to 5") == true }
        #expect { try configuration.option("flag", choices: ["a": 1, "b": 2], default: 0) } throws: { ($0 as? DefaultsError)?.message.contains("a, b") == true }
    }

    @Test func precedenceIsExplicitThenEnvironmentThenFile() throws {
        try withTemporaryDirectory { directory in
            let file = directory.path("defaults.json")
            try Data(#"{"store": "json:prefs.json?cache=off"}"#.utf8).write(to: URL(fileURLWithPath: file))
            let environment = [StoreConfiguration.storeVariable: "memory:", StoreConfiguration.fileVariable: file]

            #expect(try StoreConfiguration.resolve(explicit: "lmdb:/x", environment: environment)?.scheme == "lmdb")
            #expect(try StoreConfiguration.resolve(environment: environment)?.scheme == "memory")
            let fromFile = try #require(try StoreConfiguration.resolve(environment: [StoreConfiguration.fileVariable: file]))
            #expect(fromFile.scheme == "json")
            #expect(fromFile.cache == false)
            #expect(fromFile.resolvedPath == URL(fileURLWithPath: directory.path).appendingPathComponent("prefs.json").standardizedFileURL.path)
            #expect(try StoreConfiguration.resolve(environment: [StoreConfiguration.storeVariable: " "]) == nil)
            #expect(try StoreConfiguration.resolve(environment: [:]) == nil)
            #expect { try StoreConfiguration.resolve(environment: [StoreConfiguration.storeVariable: "nope"]) } throws: {
                ($0 as? DefaultsError)?.message.hasPrefix("In ANYDEFAULTS_STORE:") == true
            }
        }
    }

    @Test func readsTheStructuredFileFormAndRejectsBadFiles() throws {
        try withTemporaryDirectory { directory in
            let file = directory.path("structured.json")
            try Data(#"{"scheme": "SQLite", "location": "/data/p.sqlite", "cache": "off", "options": {"durability": "full", "timeout": 5}}"#.utf8)
                .write(to: URL(fileURLWithPath: file))
            let configuration = try StoreConfiguration(contentsOfFile: file)
            #expect(configuration.scheme == "sqlite")
            #expect(configuration.location == "/data/p.sqlite")
            #expect(configuration.cache == false)
            #expect(configuration.options == ["durability": "full", "timeout": "5"])

            let cases: [(String, String)] = [
                ("{", "not valid JSON"),
                ("[1]", "does not hold a JSON object"),
                (#"{"store": 3}"#, "must be a string"),
                (#"{"scheme": "json", "colour": 1}"#, "unknown field \"colour\""),
                (#"{"location": "/x"}"#, "names no \"scheme\""),
                (#"{"scheme": "json", "options": {"a": [1]}}"#, "must be a string, a number or a boolean"),
            ]
            for (text, says) in cases {
                let bad = directory.path("bad.json")
                try Data(text.utf8).write(to: URL(fileURLWithPath: bad))
                #expect { try StoreConfiguration(contentsOfFile: bad) } throws: {
                    guard let error = $0 as? DefaultsError else { return false }
                    return error.code == .invalidConfiguration && error.message.contains(says) && error.path == bad
                }
            }
            #expect { try StoreConfiguration(contentsOfFile: directory.path("missing.json")) } throws: {
                ($0 as? DefaultsError)?.message.contains("cannot be read") == true
            }
        }
    }
}
