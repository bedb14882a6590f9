import AnyDefaults
import Foundation
import TestSupport
import Testing

/// `write KEY -array-add …` and `-dict-add …` (macOS `defaults`), and `domains`; run as the
/// built executable.
@Suite(.ownThreads) struct AdditionTests {
    /// Adding to an absent key, to an array or dictionary, and refusing another type, on every
    /// persistent backend.
    @Test(arguments: StoreKind.persistent)
    func arrayAddAndDictAddAddToWhatIsStored(_ kind: StoreKind) throws {
        try withTemporaryDirectory { directory in
            let cli = try CLI(directory)
            let store = kind.store(cli)
            try cli.succeed(["--store", store, "write", "tags", "-array-add", "a"])
            try cli.succeed(["--store", store, "write", "tags", "-array-add", "b", "-int", "7", "-string", "-int"])
            try cli.succeed(["--store", store, "write", "tags", "-array-add"])
            try cli.succeed(["--store", store, "write", "window", "-dict", "width", "1280", "name", "main"])
            try cli.succeed(["--store", store, "write", "window", "-dict-add", "name", "side", "x", "-int", "1"])
            try cli.succeed(["--store", store, "write", "fresh", "-dict-add", "k", "v"])
            try cli.succeed(["--store", store, "write", "list", "--type", "json", #"[1, {"$date": "2026-11-21T09:30:00Z"}]"#])
            try cli.succeed(["--store", store, "write", "list", "-array-add", "c"])
            try cli.succeed(["--store", store, "write", "secret", "hunter2"])
            let expected: [String: DefaultsValue] = [
                "tags": .array([.string("a"), .string("b"), .int(7), .string("-int")]),
                "window": .dictionary(["width": .string("1280"), "name": .string("side"), "x": .int(1)]),
                "fresh": .dictionary(["k": .string("v")]),
                "list": .array([.int(1), .date(Date(timeIntervalSince1970: 1_795_253_400)), .string("c")]),
                "secret": .string("hunter2"),
            ]
            #expect(try cli.contents(of: store) == expected)
            // Another type is left unchanged (65), its value never shown.
            for (key, flag) in [("secret", "-array-add"), ("secret", "-dict-add"), ("tags", "-dict-add"), ("window", "-array-add")] {
                let words = flag == "-dict-add" ? ["k", "v"] : ["v"]
                let result = try cli.run(["--store", store, "write", key, flag] + words)
                #expect(result.status == 65, "\(key) \(flag): \(result.standardError)")
                #expect(result.standardError.contains("left it unchanged"), "\(result.standardError)")
                #expect(!result.standardError.contains("hunter2"))
            }
            #expect(try cli.contents(of: store) == expected)
            let odd = try cli.run(["--store", store, "write", "window", "-dict-add", "lonely"])
            #expect(odd.status == 64, "\(odd.standardError)")
            #expect(try cli.contents(of: store) == expected)
        }
    }

    /// Several processes add to one array and one dictionary at once: every element and entry is
    /// there at the end, each once (a read-modify-write that lost a race would drop some).
    @Test(arguments: StoreKind.persistent)
    func concurrentAdditionsLoseNothing(_ kind: StoreKind) throws {
        try withTemporaryDirectory { directory in
            let cli = try CLI(directory)
            let store = kind.store(cli)
            let writers = 4
            let additions = 12
            // One process per writer, each adding its elements one `anydefaults` run after another.
            var environment = cli.environment
            environment["ANYDEFAULTS"] = try ChildProcess.executable("anydefaults").path
            let running = try (1...writers).map { w in
                try ChildProcess.start(
                    executable: URL(fileURLWithPath: "/bin/sh"),
                    [
                        "-c",
                        """
                        for i in $(seq 1 \(additions)); do
                          "$ANYDEFAULTS" --store '\(store)' write list -array-add "w\(w).$i" || echo "failed list w\(w).$i"
                          "$ANYDEFAULTS" --store '\(store)' write map -dict-add "w\(w).$i" "$i" || echo "failed map w\(w).$i"
                        done
                        """,
                    ], environment: environment)
            }
            for (process, output, error) in running {
                let printed = String(decoding: output.fileHandleForReading.readDataToEndOfFile(), as: UTF8.self)
                let errors = String(decoding: error.fileHandleForReading.readDataToEndOfFile(), as: UTF8.self)
                process.waitUntilExit()
                #expect(process.terminationStatus == 0)
                #expect(printed.isEmpty && errors.isEmpty, "\(printed) \(errors)")
            }
            let stored = try cli.contents(of: store)
            var elements: [String] = []
            if case .array(let list)? = stored["list"] {
                elements = list.compactMap { if case .string(let text) = $0 { text } else { nil } }
            }
            let names = (1...writers).flatMap { w in (1...additions).map { "w\(w).\($0)" } }
            #expect(elements.sorted() == names.sorted(), "\(kind.scheme): \(elements.count) of \(names.count)")
            // Each writer's own additions keep their order.
            for w in 1...writers {
                #expect(elements.filter { $0.hasPrefix("w\(w).") } == (1...additions).map { "w\(w).\($0)" })
            }
            let map = Dictionary(uniqueKeysWithValues: names.map { ($0, DefaultsValue.string(String($0.split(separator: ".")[1]))) })
            #expect(stored["map"] == .dictionary(map), "\(kind.scheme)")
        }
    }

    /// `domains` lists the UserDefaults suites (as macOS `defaults domains` does), and says that
    /// other backends have none.
    @Test func domainsListsTheSuitesAndOnlyThem() throws {
        try withTemporaryDirectory { directory in
            let cli = try CLI(directory)
            #expect(try cli.succeed(["domains"]).standardOutput.isEmpty)
            for suite in ["com.example.b", "com.example.a", "with space"] {
                try cli.succeed(["--store", "userdefaults:" + suite, "write", "k", "v"])
            }
            // Neither a temporary file, nor a file that is no property list, nor a name that is
            // not a suite of its own, nor the tool's own store.
            try Data("partial".utf8).write(to: URL(fileURLWithPath: cli.path("config/.com.example.a.plist.tmp-1-x")))
            try Data("x".utf8).write(to: URL(fileURLWithPath: cli.path("config/notes.txt")))
            try Data().write(to: URL(fileURLWithPath: cli.path("config/NSGlobalDomain.plist")))
            try cli.succeed(["write", "k", "v"])
            let listed = "com.example.a\ncom.example.b\nwith space\n"
            #expect(try cli.succeed(["domains"]).standardOutput == listed)
            #expect(try cli.succeed(["--store", "userdefaults:", "domains"]).standardOutput == listed)
            // Each listed name opens as a suite.
            #expect(try cli.succeed(["--store", "userdefaults:with space", "read", "k"]).standardOutput == "\"v\"\n")
            for store in [cli.json(), "sqlite:" + cli.path("s.sqlite"), "memory:", "lmdb:" + cli.path("l")] {
                let result = try cli.run(["--store", store, "domains"])
                #expect(result.status == 64, "\(store): \(result.standardError)")
                #expect(result.standardError.contains("stores have no domains to list"), "\(result.standardError)")
            }
            #expect(!FileManager.default.fileExists(atPath: cli.path("s.sqlite")))
        }
    }
}
