#if !canImport(Darwin)
import AnyDefaultsCore
import AnyDefaultsUserDefaults
import Foundation
import Testing
import TestSupport

/// The provider and Foundation in other processes. Children that need their own preferences
/// directory get XDG_CONFIG_HOME pointing into a temporary directory: Foundation reads it only at
/// start-up, so it cannot be changed inside this process.
@Suite(.ownThreads) struct UserDefaultsProcessTests {
    static let child = "TestChild"

    /// Runs the child with its preferences in `directory`, expecting success.
    @discardableResult
    static func run(_ arguments: [String], in directory: TemporaryDirectory? = nil) throws -> [String] {
        let environment = directory.map { ["XDG_CONFIG_HOME": $0.path] }
        let result = try ChildProcess.run(child, arguments, environment: environment)
        #expect(result.status == 0, "\(arguments): \(result.standardError)")
        return result.standardOutput.split(separator: "\n").map(String.init)
    }

    @Test func theProviderWritesTheFileFoundationReads() throws {
        try withTemporaryDirectory { directory in
            #expect(try Self.run(["where", "userdefaults:com.example.suite"], in: directory) == [directory.path("com.example.suite.plist")])
            let lines = try Self.run(["round-trip", "userdefaults:com.example.suite", "volume:double=0.5"], in: directory)
            // Plain UserDefaults in the child reads the provider's write at once, as a Double.
            #expect(lines == ["Double 0.5", "0.5"])
            let bytes = try Data(contentsOf: URL(fileURLWithPath: directory.path("com.example.suite.plist")))
            #expect(bytes.starts(with: Array("bplist00".utf8)))
        }
    }

    @Test func theStandardSuiteIsTheProcessesOwnDomain() throws {
        try withTemporaryDirectory { directory in
            let lines = try Self.run(["round-trip", "userdefaults:", "launches=7"], in: directory)
            #expect(lines == ["Int 7", "7"])
            #expect(FileManager.default.fileExists(atPath: directory.path(Self.child + ".plist")))
            #expect(try Self.run(["plain-get", "userdefaults:", "launches"], in: directory) == ["Int 7"])
        }
    }

    @Test func plainWritesFromAnotherProcessReadBackWithTheirTypes() throws {
        try withTemporaryDirectory { directory in
            for (kind, text) in [("bool", "true"), ("int", "1"), ("double", "1")] {
                try Self.run(["plain-set", "userdefaults:shared", "\(kind):\(kind)=\(text)"], in: directory)
            }
            // Foundation wrote XML, in place; the provider tells the three apart all the same.
            #expect(try Self.run(["get", "userdefaults:shared", "bool"], in: directory) == ["true"])
            #expect(try Self.run(["get", "userdefaults:shared", "int"], in: directory) == ["1"])
            #expect(try Self.run(["get", "userdefaults:shared", "double"], in: directory) == ["1.0"])
        }
    }

    @Test func anotherProcessesWritesArriveAsExternalEvents() throws {
        try withTestSuite { suite in
            let store = try suite.provider()
            #expect(store.capabilities.contains(.externalChanges))
            let log = EventLog(store)
            // The children inherit this process's preferences directory: one uses the provider,
            // one plain UserDefaults (which rewrites the file in place, as XML).
            try Self.run(["apply", "userdefaults:" + suite.name, "fromProvider:string=hello"])
            #expect(log.wait(for: 1) == [DefaultsChangeEvent(key: "fromProvider", newValue: .string("hello"), origin: .external)])
            try Self.run(["plain-set", "userdefaults:" + suite.name, "fromFoundation:double=2"])
            #expect(log.wait(for: 2).last == DefaultsChangeEvent(key: "fromFoundation", newValue: .double(2), origin: .external))
            #expect(try store.value(forKey: "fromProvider") == .string("hello"))
        }
    }

    @Test func concurrentWritersInSeveralProcessesLoseNoUpdate() throws {
        try withTemporaryDirectory { directory in
            let writers = try (0..<4).map { index in
                try ChildProcess.start(Self.child, ["write", "userdefaults:shared", "p\(index)", "8"], environment: ["XDG_CONFIG_HOME": directory.path])
            }
            for writer in writers {
                writer.process.waitUntilExit()
                #expect(writer.process.terminationStatus == 0)
            }
            #expect(try Self.run(["count", "userdefaults:shared"], in: directory) == ["32"])
        }
    }

    @Test func aWriterWaitsForTheLockAndGivesUpAsBusy() throws {
        try withTemporaryDirectory { directory in
            let holder = try ChildProcess.start(Self.child, ["hold-lock", "userdefaults:shared", "600"], environment: ["XDG_CONFIG_HOME": directory.path])
            defer {
                // SIGKILL: the child may have inherited a mask that blocks SIGTERM.
                kill(holder.process.processIdentifier, SIGKILL)
                holder.process.waitUntilExit()
            }
            // Wait until the holder reports that it holds the lock.
            let line = holder.output.fileHandleForReading.availableData
            #expect(String(decoding: line, as: UTF8.self).hasPrefix("locked"))
            let result = try ChildProcess.run(
                Self.child, ["apply", "userdefaults:shared?locktimeout=1", "k=1"], environment: ["XDG_CONFIG_HOME": directory.path])
            #expect(result.status == 1)
            #expect(result.standardOutput == "error busy \(directory.path)\n")
            #expect(!FileManager.default.fileExists(atPath: directory.path("shared.plist")))
        }
    }

    @Test func foundationsGlobalDomainIsNotPartOfTheSuite() throws {
        try withTemporaryDirectory { directory in
            // Foundation on Linux keeps NSGlobalDomain in NSGlobalDomain.plist; the provider reads
            // its suite's file only.
            try Self.run(["plain-set", "userdefaults:NSGlobalDomain", "global=1"], in: directory)
            #expect(try Self.run(["get", "userdefaults:own", "global"], in: directory) == ["nil"])
            #expect(try Self.run(["count", "userdefaults:own"], in: directory) == ["0"])
        }
    }
}
#endif
