import AnyDefaults
import Foundation
import Testing
import TestSupport

/// A stored value never appears in an error (nor, so, in the log line of the facade's default
/// error handler, which is the error's description): a secret marker is stored, every error path
/// that can be reached is triggered, and no error mentions the marker.
@Suite(.ownThreads) struct SecretTests {
    static let secret = "SECRET-\(UUID().uuidString)"

    /// Every text an error shows: its description, its reflection, its message and its cause.
    static func texts(_ error: any Error) -> [String] {
        var texts = ["\(error)", String(reflecting: error)]
        if let error = error as? DefaultsError {
            texts.append(error.message)
            if let cause = error.cause { texts += Self.texts(cause) }
        }
        return texts
    }

    static func expectNoSecret(_ error: (any Error)?, _ context: String, sourceLocation: SourceLocation = #_sourceLocation) {
        guard let error else {
            Issue.record("\(context): no error", sourceLocation: sourceLocation)
            return
        }
        #expect(!texts(error).contains { $0.contains(secret) }, "\(context): \(error)", sourceLocation: sourceLocation)
    }

    @Test(arguments: TestStore.allSchemes)
    func providerErrorsNeverQuoteValues(scheme: String) throws {
        try withTestStore(scheme) { store, _ in
            let provider = try store.open()
            let cached = try ProviderRegistry.standard.makeProvider(store.string().replacingOccurrences(of: "cache=off", with: "cache=on"))
            let value = DefaultsValue.dictionary(["password": .string(Self.secret), "blob": .data(Data(Self.secret.utf8))])
            try provider.setValue(value, forKey: "credentials")
            for target in [provider, cached] as [any DefaultsProvider] {
                Self.expectNoSecret(#expect(throws: DefaultsError.self) { try target.setValue(value, forKey: "") }, "empty key")
                Self.expectNoSecret(
                    #expect(throws: DefaultsError.self) { try target.apply([.set("ok", value), .set("", value)]) }, "batch with an empty key")
                var deep = Deep.array(depth: DefaultsValue.maximumNestingDepth + 1)
                deep = .array([deep, .string(Self.secret)])
                Self.expectNoSecret(#expect(throws: DefaultsError.self) { try target.setValue(deep, forKey: "deep") }, "deep value")
                Deep.dismantle(&deep)
            }
        }
    }

    struct Credentials: Codable {
        var user: String
        var pin: Int
    }

    @Test func coderErrorsNeverQuoteValues() throws {
        let stored = DefaultsValue.dictionary(["user": .string("me"), "pin": .string(Self.secret)])
        Self.expectNoSecret(
            #expect(throws: DefaultsError.self) { try DefaultsDecoder().decode(Credentials.self, from: stored, forKey: "k") },
            "structured decoding")
        Self.expectNoSecret(
            #expect(throws: DefaultsError.self) { try DefaultsDecoder().decode(Int.self, from: .string(Self.secret)) }, "scalar decoding")
        Self.expectNoSecret(
            #expect(throws: DefaultsError.self) { try DefaultsDecoder().decode(UUID.self, from: .string(Self.secret)) }, "UUID")
        Self.expectNoSecret(
            #expect(throws: DefaultsError.self) { try DefaultsDecoder().decode(Date.self, from: .string(Self.secret)) }, "Date")
        let json = Data("{\"user\": \"me\", \"pin\": \"\(Self.secret)\"}".utf8)
        Self.expectNoSecret(
            #expect(throws: DefaultsError.self) { try DefaultsDecoder(strategy: .jsonData).decode(Credentials.self, from: .data(json)) },
            "JSON decoding")
        let broken = Data("{\"user\": \"\(Self.secret)".utf8)
        Self.expectNoSecret(
            #expect(throws: DefaultsError.self) { try DefaultsDecoder(strategy: .jsonData).decode(Credentials.self, from: .data(broken)) },
            "broken JSON")
        Self.expectNoSecret(
            #expect(throws: DefaultsError.self) { try DefaultsDecoder(strategy: .jsonString).decode([Int].self, from: .string("[\"\(Self.secret)\"]")) },
            "JSON string")
        struct Unsigned: Encodable { var name: String; var big: UInt64 }
        Self.expectNoSecret(
            #expect(throws: DefaultsError.self) { try DefaultsEncoder().encode(Unsigned(name: Self.secret, big: .max)) }, "encoding")
        // ExactJSON's readers.
        Self.expectNoSecret(#expect(throws: DefaultsError.self) { try ExactJSON.value(from: "\"\(Self.secret)") }, "ExactJSON value")
        Self.expectNoSecret(#expect(throws: DefaultsError.self) { try ExactJSON.value(from: "[\"\(Self.secret)\", nul]") }, "ExactJSON null")
        Self.expectNoSecret(
            #expect(throws: DefaultsError.self) { try ExactJSON.store(from: Data("{\"k\": {\"$date\": \"\(Self.secret)\"}}".utf8)) }, "ExactJSON tag")
        Self.expectNoSecret(
            #expect(throws: DefaultsError.self) {
                try ExactJSON.store(from: Data("{\"k\": {\"\(Self.secret)\": 1, \"\(Self.secret)\": 2}}".utf8))
            }, "a key repeated inside a value")
        Self.expectNoSecret(
            #expect(throws: DefaultsError.self) { try ExactJSON.store(from: Data("{\"k\": {\"$\(Self.secret)\": 1}}".utf8)) }, "unknown tag")
        Self.expectNoSecret(
            #expect(throws: DefaultsError.self) { try ExactJSON.store(from: Data("{\"k\": 1\(Self.secret)}".utf8)) }, "stray text")
        Self.expectNoSecret(
            #expect(throws: DefaultsError.self) { try ExactJSON.store(from: Data("{\"k\": 123456789012345678901234567890}".utf8)) },
            "integer out of range")
    }

    @Test func facadeReportsNeverQuoteValues() throws {
        let reported = Failures()
        let defaults = Defaults(MemoryProvider(), errorHandler: { reported.record(($0.description)) })
        defaults.set(Self.secret, forKey: "password")
        _ = defaults.integer(forKey: "password")
        _ = defaults.url(forKey: "password")
        _ = defaults.data(forKey: "password")
        _ = defaults.codable(Credentials.self, forKey: "password")
        let key = DefaultsKey<Int>("password", default: 0)
        _ = defaults[key]
        #expect(!reported.all.isEmpty)
        #expect(!reported.all.contains { $0.contains(Self.secret) }, "\(reported.all)")
        Self.expectNoSecret(#expect(throws: DefaultsError.self) { try defaults.throwing.value(for: key) }, "typed key")
        Self.expectNoSecret(
            #expect(throws: DefaultsError.self) { try defaults.throwing.codable(Credentials.self, forKey: "password") }, "codable")
        Self.expectNoSecret(
            #expect(throws: DefaultsError.self) { try defaults.throwing.value(Double.self, forKey: "password") }, "by name")
    }
}
