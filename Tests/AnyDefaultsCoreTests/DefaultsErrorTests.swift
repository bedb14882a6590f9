import AnyDefaultsCore
import Testing

@Suite struct DefaultsErrorTests {
    struct Cause: Error, CustomStringConvertible { var description: String { "disk on fire" } }

    @Test func descriptionNamesBackendCodeKeyPathAndCause() {
        let error = DefaultsError(.corrupted, "Not a database.", backend: "SQLite", key: "k", path: "/tmp/x.sqlite", cause: Cause())
        #expect(error.description == #"SQLite: corrupted: Not a database. (key: "k") (path: /tmp/x.sqlite) (cause: disk on fire)"#)
    }

    @Test func codesAreDistinct() {
        let codes: [DefaultsError.Code] = [
            .invalidKey, .invalidValue, .corrupted, .incompatibleFormat, .notFound, .permissionDenied,
            .storageFull, .busy, .ioFailure, .closed, .invalidConfiguration, .typeMismatch,
            .encodingFailed, .decodingFailed, .unsupported, .internalError,
        ]
        #expect(Set(codes).count == codes.count)
    }

    @Test func validationRejectsEmptyKeyAndDeepValues() throws {
        #expect(throws: DefaultsError.self) { try DefaultsValidation.canonicalKey("", backend: "T") }
        do {
            _ = try DefaultsValidation.canonicalKey("", backend: "T")
        } catch {
            #expect(error.code == .invalidKey)
            #expect(error.backend == "T")
        }
        var deep = DefaultsValue.string("secret-value")
        for _ in 0...DefaultsValue.maximumNestingDepth { deep = .array([deep]) }
        do {
            try DefaultsValidation.checkValue(deep, forKey: "k", backend: "T")
            Issue.record("a value nested too deeply was accepted")
        } catch {
            #expect(error.code == .invalidValue)
            #expect(!error.description.contains("secret-value"))
        }
    }

    @Test func canonicalKeyUnifiesEquivalentForms() throws {
        let composed = "caf\u{E9}"
        let decomposed = "cafe\u{301}"
        #expect(composed == decomposed)
        let a = try DefaultsValidation.canonicalKey(composed, backend: "T")
        let b = try DefaultsValidation.canonicalKey(decomposed, backend: "T")
        #expect(Array(a.utf8) == Array(b.utf8))
    }
}
