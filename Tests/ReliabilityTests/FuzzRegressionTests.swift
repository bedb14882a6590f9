import AnyDefaults
import Foundation
import Testing
import TestSupport

/// Inputs that the fuzz targets (Fuzz/, scripts/fuzz) found or that stand for what they found,
/// kept so that the fixes stay fixed.
@Suite(.ownThreads) struct FuzzRegressionTests {
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

    #if !canImport(Darwin)
    /// `{"k": set([1])}` as a binary property list: Foundation on Linux crashes (SIGSEGV) on it, so a
    /// suite file holding it crashed the UserDefaults provider, which handed binary property lists
    /// its own reader rejected to Foundation (found by FuzzPropertyList). Also with another
    /// "bplist0?" version, which Foundation takes for binary too.
    @Test(arguments: ["bplist00", "bplist01"])
    func aBinaryPropertyListHoldingASetIsCorruptedNotACrash(magic: String) throws {
        try withTestStore("userdefaults") { store, _ in
            let objects: [[UInt8]] = [[0xD1, 1, 2], [0x51, UInt8(ascii: "k")], [0xC1, 3], [0x10, 1]]
            var bytes = Array(magic.utf8)
            var offsets: [UInt8] = []
            for object in objects {
                offsets.append(UInt8(bytes.count))
                bytes += object
            }
            let table = UInt8(bytes.count)
            bytes += offsets + [0, 0, 0, 0, 0, 0, 1, 1] + [0, 0, 0, 0, 0, 0, 0, UInt8(objects.count)] + [UInt8](repeating: 0, count: 8)
                + [0, 0, 0, 0, 0, 0, 0, table]
            try Data(bytes).write(to: URL(fileURLWithPath: store.dataFile))
            let error = #expect(throws: DefaultsError.self) { _ = try store.open().allValues() }
            #expect(error?.code == .corrupted)
            #expect(try Data(contentsOf: URL(fileURLWithPath: store.dataFile)) == Data(bytes))
        }
    }
    #endif
}
