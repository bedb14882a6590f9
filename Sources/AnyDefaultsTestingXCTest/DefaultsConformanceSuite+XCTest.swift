// XCTest's way of skipping, kept out of AnyDefaultsTesting so that tools linking the suite (such as
// a verify command) never link XCTest, which is not available outside a test run on every platform.
@_exported import AnyDefaultsTesting

#if canImport(XCTest)
import XCTest

extension DefaultsConformanceSuite {
    /// Runs `group` in an XCTest test: a failed check fails the test (the thrown
    /// ``ConformanceFailure`` lists every failed check), and a group the provider does not claim
    /// what it needs for is reported as skipped (`XCTSkip`), never as a pass.
    ///
    /// ```swift
    /// final class MyStoreConformanceTests: XCTestCase {
    ///     func testPersistence() throws { try suite.runInXCTest(.persistence) }
    /// }
    /// ```
    @discardableResult
    public func runInXCTest(_ group: Group) throws -> ConformanceReport {
        let report = try report(group)
        if let reason = report.skippedBecause {
            throw XCTSkip("conformance group \(group) skipped: \(reason)")
        }
        return report
    }
}
#endif
