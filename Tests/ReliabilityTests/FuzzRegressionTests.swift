import AnyDefaults
import Foundation
import Testing

/// Inputs that the fuzz targets (Fuzz/, scripts/fuzz) found or that stand for what they found,
/// kept so that the fixes stay fixed.
@Suite struct FuzzRegressionTests {
    /// A configuration's canonical string parses back to it: the property FuzzConfiguration checks.
    /// The first five broke it (found while writing that target) before the fix in
    /// `StoreConfiguration.description`.
    @Test(arguments: [
        "json:x?a%26b=1",          // an option name holding "&"
        "json:x?a%3Db=1",          // an option name holding "="
        "json:%2F%2Fhost/x.json",  // a location starting with "//"
        "json:%2F%2F%2Fx",         // a location starting with "///"
        "json:x?%25=%25",          // "%" in a name and a value
        "json:x?a+b=c+d",          // "+" is not a space
        "json:%3F?x=%3F",          // "?" in the location and a value
        "userdefaults:%20spaced%20?recover=on",
    ])
    func canonicalStringsParseBack(text: String) throws {
        let configuration = try StoreConfiguration(parsing: text)
        let again = try StoreConfiguration(parsing: configuration.description)
        #expect(again == configuration, "\(configuration.description)")
    }

    /// A double beyond Decimal's range decoded as a NaN Decimal, which then stored as "NaN" and
    /// could not be read back (found by FuzzCodable).
    @Test func decimalsOutOfRangeFailAndNaNRoundTrips() throws {
        for double in [1e300, -1e200, 1e-300, Double.leastNonzeroMagnitude, Double.greatestFiniteMagnitude] {
            let error = #expect(throws: DefaultsError.self) { try DefaultsDecoder().decode(Decimal.self, from: .double(double)) }
            #expect(error?.code == .decodingFailed)
        }
        let stored = try DefaultsEncoder().encode(Decimal.nan)
        #expect(try DefaultsDecoder().decode(Decimal.self, from: stored).isNaN)
        let ordinary = try DefaultsEncoder().encode(Decimal(string: "123.456")!)
        #expect(try DefaultsDecoder().decode(Decimal.self, from: ordinary) == Decimal(string: "123.456")!)
        #expect(try DefaultsDecoder().decode(Decimal.self, from: .double(123.5)) == Decimal(string: "123.5")!)
    }
}
