import AnyDefaultsCore
import Testing

/// The documented classification of every code: whose fault, and whether to retry.
@Suite struct DefaultsErrorKindTests {
    static let expected: [(DefaultsError.Code, DefaultsError.Kind)] = [
        (.invalidKey, .callerFault), (.invalidValue, .callerFault), (.typeMismatch, .callerFault),
        (.encodingFailed, .callerFault), (.decodingFailed, .callerFault), (.invalidConfiguration, .callerFault),
        (.unsupported, .callerFault),
        (.storageFull, .storeState), (.permissionDenied, .storeState), (.corrupted, .storeState),
        (.incompatibleFormat, .storeState), (.notFound, .storeState), (.ioFailure, .storeState),
        (.busy, .transient), (.closed, .transient), (.unavailable, .transient),
        (.internalError, .internalFailure),
    ]

    @Test func everyCodeHasItsDocumentedKind() {
        for (code, kind) in Self.expected {
            let error = DefaultsError(code, "m", backend: "T")
            #expect(error.kind == kind, "\(code)")
            #expect(error.isRetryable == (kind == .transient), "\(code)")
        }
    }

    @Test func onlyTransientErrorsAreRetryable() {
        let retryable = Self.expected.filter { DefaultsError($0.0, "m", backend: "T").isRetryable }.map(\.0.description)
        #expect(retryable == ["busy", "closed", "unavailable"])
    }
}
