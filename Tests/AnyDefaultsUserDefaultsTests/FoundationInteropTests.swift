import AnyDefaultsCore
import AnyDefaultsUserDefaults
import Foundation
import Testing
import TestSupport

/// Plain `UserDefaults` code and the provider on the same suite, in this process.
// Serialized: Foundation on Linux guards neither `register(defaults:)` nor the reads that consult
// registered defaults with a lock, so plain reads must not run while another test registers.
@Suite(.serialized) struct FoundationInteropTests {
    @Test func plainReadersSeeOrdinaryValues() throws {
        try withTestSuite { suite in
            try suite.provider().apply(Samples.values.map { .set($0.key, $0.value) })
            let plain = try #require(suite.plain)
            #expect(plain.object(forKey: "bool.true") as? Bool == true)
            #expect(plain.bool(forKey: "bool.true") && !plain.bool(forKey: "bool.false"))
            // Foundation on Linux unboxes some 64-bit integers as Int64 and others as Int (so that
            // its own `integer(forKey:)` returns 0 for Int64.max); NSNumber reads both.
            #expect((plain.object(forKey: "int.max") as? NSNumber)?.int64Value == .max)
            #expect((plain.object(forKey: "int.min") as? NSNumber)?.int64Value == .min)
            #expect(plain.integer(forKey: "int.one") == 1)
            #expect(plain.double(forKey: "double.tenth") == 0.1)
            #expect(plain.double(forKey: "double.negativeZero").sign == .minus)
            #expect(plain.double(forKey: "double.nan").isNaN)
            #expect(plain.double(forKey: "double.negativeInfinity") == -.infinity)
            #expect((plain.object(forKey: "date.fraction") as? Date)?.timeIntervalSinceReferenceDate == 1.25)
            #expect(plain.string(forKey: "string.awkward") == Samples.values["string.awkward"].flatMap {
                if case .string(let text) = $0 { text } else { nil }
            })
            #expect(plain.data(forKey: "data.bytes") == Data((0...255).map { UInt8($0) }))
            #expect(plain.array(forKey: "array.empty")?.isEmpty == true)
            let nested = try #require(plain.dictionary(forKey: "nested"))
            let mixed = try #require(nested["mixed"] as? [Any])
            #expect(mixed.count == 4)
            #expect(plain.string(forKey: "ключ 🔑") == "a Unicode key")
            #if !canImport(Darwin)
            // swift-corelibs-foundation hands out Swift values of the stored type.
            #expect(type(of: try #require(plain.object(forKey: "bool.true"))) == Bool.self)
            #expect(type(of: try #require(plain.object(forKey: "double.one"))) == Double.self)
            #expect(plain.object(forKey: "int.one") as? Int == 1)
            #expect(mixed[0] as? Int == 1 && mixed[1] as? Double == 1 && mixed[2] as? Bool == true)
            #endif
        }
    }

    @Test func valuesWrittenByPlainUserDefaultsReadBackWithTheirTypes() throws {
        try withTestSuite { suite in
            let store = try suite.provider()
            let plain = try #require(suite.plain)
            plain.set(true, forKey: "bool")
            plain.set(1, forKey: "int")
            plain.set(1.0, forKey: "double")
            plain.set(Float(1.5), forKey: "float")
            plain.set(Int64.max, forKey: "int64")
            plain.set("text", forKey: "string")
            plain.set(Data([1, 2]), forKey: "data")
            plain.set(Date(timeIntervalSinceReferenceDate: 7), forKey: "date")
            plain.set([1, 2.5, false, "x"] as [Any], forKey: "array")
            plain.set(["k": 2.5, "b": true] as [String: Any], forKey: "dictionary")
            plain.set(URL(fileURLWithPath: "/tmp/file"), forKey: "url")
            plain.synchronize()
            try store.refresh()

            #expect(try store.value(forKey: "bool") == .bool(true))
            #expect(try store.value(forKey: "int") == .int(1))
            #expect(try store.value(forKey: "double") == .double(1))
            #expect(try store.value(forKey: "float") == .double(1.5))
            #expect(try store.value(forKey: "int64") == .int(.max))
            #expect(try store.value(forKey: "string") == .string("text"))
            #expect(try store.value(forKey: "data") == .data(Data([1, 2])))
            #expect(try store.value(forKey: "date") == .date(Date(timeIntervalSinceReferenceDate: 7)))
            #expect(try store.value(forKey: "array") == .array([.int(1), .double(2.5), .bool(false), .string("x")]))
            #expect(try store.value(forKey: "dictionary") == .dictionary(["k": .double(2.5), "b": .bool(true)]))
            #if !canImport(Darwin)
            #expect(try store.value(forKey: "url") == .string("/tmp/file"))
            #endif
        }
    }

    @Test func changesFromPlainUserDefaultsArriveAsExternalEvents() throws {
        try withTestSuite { suite in
            let store = try suite.provider()
            try store.setValue(.int(1), forKey: "count")
            let log = EventLog(store)
            let plain = try #require(suite.plain)
            plain.set(2, forKey: "count")
            plain.set("new", forKey: "added")
            plain.synchronize()
            try store.refresh()
            #if !canImport(Darwin)
            // The file watcher may have reloaded first and still be delivering its events.
            #expect(Set(log.wait(for: 2)) == [
                DefaultsChangeEvent(key: "count", newValue: .int(2), origin: .external),
                DefaultsChangeEvent(key: "added", newValue: .string("new"), origin: .external),
            ])
            #endif
            #expect(try store.value(forKey: "count") == .int(2))
        }
    }

    @Test func onlyTheSuitesOwnDomainIsVisible() throws {
        try withTestSuite { suite in
            let registered = "anydefaults.registered.\(UUID().uuidString)"
            UserDefaults.standard.register(defaults: [registered: 1])
            try #require(suite.plain).register(defaults: [registered + ".suite": 1])
            let store = try suite.provider()
            try store.setValue(.int(1), forKey: "own")
            #expect(try store.keys() == ["own"])
            #expect(try store.value(forKey: registered) == nil)
            #expect(try store.value(forKey: registered + ".suite") == nil)
            // Launch arguments (`-key value`) form Foundation's argument domain; not part of the suite.
            #expect(try store.value(forKey: "testing-library") == nil)
        }
    }

    #if !canImport(Darwin)
    @Test func unsavedPlainChangesAreKeptWhenTheProviderWrites() throws {
        try withTestSuite { suite in
            let store = try suite.provider()
            try store.setValue(.int(1), forKey: "mine")
            let plain = try #require(suite.plain)
            // Not synchronized: on Linux this lives only in Foundation's memory for now.
            plain.set("pending", forKey: "theirs")
            try store.setValue(.int(2), forKey: "mine")
            // The provider's write made Foundation save its change too, and the provider took it in.
            #expect(try store.allValues() == ["mine": .int(2), "theirs": .string("pending")])
            #expect(plain.integer(forKey: "mine") == 2)
        }
    }

    @Test func theFileIsABinaryPropertyListPlainFoundationCanRead() throws {
        try withTestSuite { suite in
            try suite.provider().setValue(.double(-0.0), forKey: "z")
            let url = try #require(suite.fileURL)
            let bytes = try Data(contentsOf: url)
            #expect(bytes.starts(with: Array("bplist00".utf8)))
            let attributes = try FileManager.default.attributesOfItem(atPath: url.path)
            #expect((attributes[.posixPermissions] as? Int).map { $0 & 0o077 } == 0)
        }
    }
    #endif
}
