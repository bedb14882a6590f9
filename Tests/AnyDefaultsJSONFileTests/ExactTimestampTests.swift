import AnyDefaultsCore
@testable import AnyDefaultsJSONFile
import Foundation
import Testing

@Suite struct ExactTimestampTests {
    @Test func formatsKnownMoments() {
        #expect(ExactTimestamp.string(for: 0) == "2001-01-01T00:00:00Z")
        #expect(ExactTimestamp.string(for: -978_307_200) == "1970-01-01T00:00:00Z")
        #expect(ExactTimestamp.string(for: 736_257_600) == "2024-05-01T12:00:00Z")
        #expect(ExactTimestamp.string(for: 736_257_600.5) == "2024-05-01T12:00:00.5Z")
        #expect(ExactTimestamp.string(for: -0.25) == "2000-12-31T23:59:59.75Z")
        // Leap years by the 400 and the 100 rule: 2000-02-29 exists, 2100-02-29 does not.
        #expect(ExactTimestamp.string(for: -26_524_800) == "2000-02-29T00:00:00Z")
        #expect(ExactTimestamp.string(for: 3_129_235_200) == "2100-03-01T00:00:00Z")
        #expect(ExactTimestamp.string(for: 3_129_235_200 - 86_400) == "2100-02-28T00:00:00Z")
        #expect(ExactTimestamp.string(for: -63_113_904_000) == "0001-01-01T00:00:00Z")
    }

    @Test func givesUpWhereTextCannotBeExact() {
        #expect(ExactTimestamp.string(for: -0.0) == nil)
        #expect(ExactTimestamp.string(for: 1e-300) == nil)
        #expect(ExactTimestamp.string(for: .nan) == nil)
        #expect(ExactTimestamp.string(for: 1e12) == nil)  // year 33690
        #expect(ExactTimestamp.string(for: -63_113_904_001) == nil)  // before year 1
    }

    /// Foundation switches to the Julian calendar before October 1582; ISO 8601 (and this
    /// backend) stays Gregorian, so compare from 1583 on.
    @Test func agreesWithFoundationSince1583() throws {
        let formatter = ISO8601DateFormatter()
        formatter.timeZone = TimeZone(identifier: "UTC")
        for _ in 0..<2000 {
            let interval = Double(Int64.random(in: -13_000_000_000...250_000_000_000))
            let text = try #require(ExactTimestamp.string(for: interval))
            #expect(text == formatter.string(from: Date(timeIntervalSinceReferenceDate: interval)))
            #expect(ExactTimestamp.interval(from: text) == interval)
        }
    }

    @Test func readsOffsetsAndRejectsNonsense() {
        #expect(ExactTimestamp.interval(from: "2001-01-01T01:30:00+01:30") == 0)
        #expect(ExactTimestamp.interval(from: "2000-12-31t23:00:00-01:00z") == nil)
        #expect(ExactTimestamp.interval(from: "2000-12-31t23:00:00-01:00") == 0)
        for bad in ["", "2001-01-01", "2001-13-01T00:00:00Z", "2001-02-29T00:00:00Z", "2001-01-01T24:00:00Z",
                    "2001-01-01T00:60:00Z", "2001-01-01T00:00:60Z", "2001-01-01T00:00:00.Z", "2001-01-01T00:00:00",
                    "2001-01-01T00:00:00Zjunk", "+2001-01-01T00:00:00Z", "2001-01-01T00:00:00+1:00"] {
            #expect(ExactTimestamp.interval(from: bad) == nil, "\(bad)")
        }
    }

    @Test func namesFilesCompactly() {
        #expect(ExactTimestamp.compactUTC(secondsSinceReferenceDate: 736_257_600.9) == "20240501T120000Z")
    }
}
