/// Dates as ISO 8601 text that reads back to exactly the same `Double`, for the `$date` form of
/// JSON settings files.
///
/// The time of a `Date` is a `Double` of seconds since 2001-01-01T00:00:00Z. ``string(for:)`` writes
/// the shortest UTC text (`2024-05-01T12:00:00Z`, `2024-05-01T12:00:00.25Z`, at most nine
/// fraction digits) that ``interval(from:)`` turns back into the very same bits, and gives up
/// (the caller then writes the number) when no such text exists, for example for `-0.0`, for
/// sub-nanosecond detail, or outside the years 0001 to 9999.
package enum ExactTimestamp {
    /// Seconds from 1970-01-01 to 2001-01-01, the reference date of `Date`.
    private static let referenceUnixSeconds: Int64 = 978_307_200
    /// 0001-01-01T00:00:00Z and 10000-01-01T00:00:00Z, in seconds since the reference date.
    private static let earliest = Double(-62_135_596_800 - referenceUnixSeconds)
    private static let end = Double(253_402_300_800 - referenceUnixSeconds)

    /// The exact UTC text for `interval` seconds since the reference date, or `nil`.
    package static func string(for interval: Double) -> String? {
        guard interval.isFinite, interval >= earliest, interval < end else { return nil }
        let whole = interval.rounded(.down)
        let fraction = interval - whole  // exact: both lie in the same binade or below
        let base = civilText(unixSeconds: Int64(whole) + referenceUnixSeconds)
        var multiplier = 1.0
        for digits in 0...9 {
            let candidate: String
            if digits == 0 {
                guard fraction == 0 else { continue }
                candidate = base + "Z"
            } else {
                multiplier *= 10
                let scaled = (fraction * multiplier).rounded()
                guard scaled < multiplier else { continue }
                candidate = base + "." + padded(Int64(scaled), width: digits) + "Z"
            }
            if let back = Self.interval(from: candidate), back.bitPattern == interval.bitPattern {
                return candidate
            }
        }
        return nil
    }

    /// The seconds since the reference date that `text` names: `YYYY-MM-DDTHH:MM:SS`, an optional
    /// fraction of any length, and `Z` or an offset `±HH:MM`. `nil` if `text` is not such a date.
    package static func interval(from text: String) -> Double? {
        let bytes = Array(text.utf8)
        var index = 0
        func number(_ width: Int) -> Int64? {
            guard index + width <= bytes.count else { return nil }
            var value: Int64 = 0
            for byte in bytes[index..<(index + width)] {
                guard byte >= UInt8(ascii: "0"), byte <= UInt8(ascii: "9") else { return nil }
                value = value * 10 + Int64(byte - UInt8(ascii: "0"))
            }
            index += width
            return value
        }
        func skip(_ allowed: String) -> Bool {
            guard index < bytes.count, allowed.utf8.contains(bytes[index]) else { return false }
            index += 1
            return true
        }
        guard let year = number(4), skip("-"), let month = number(2), skip("-"), let day = number(2),
            skip("Tt"), let hour = number(2), skip(":"), let minute = number(2), skip(":"), let second = number(2),
            (1...12).contains(month), day >= 1, day <= daysInMonth(year: year, month: month),
            hour < 24, minute < 60, second < 60
        else { return nil }
        var fraction = 0.0
        if skip(".") {
            let start = index
            while index < bytes.count, bytes[index] >= UInt8(ascii: "0"), bytes[index] <= UInt8(ascii: "9") { index += 1 }
            guard index > start, let value = Double("0." + String(decoding: bytes[start..<index], as: UTF8.self)) else {
                return nil
            }
            fraction = value
        }
        var offsetSeconds: Int64 = 0
        if !skip("Zz") {
            guard index < bytes.count else { return nil }
            let sign: Int64 = bytes[index] == UInt8(ascii: "-") ? -1 : 1
            guard skip("+-"), let offsetHours = number(2), skip(":"), let offsetMinutes = number(2),
                offsetHours < 24, offsetMinutes < 60
            else { return nil }
            offsetSeconds = sign * (offsetHours * 3600 + offsetMinutes * 60)
        }
        guard index == bytes.count else { return nil }
        let unix = days(year: year, month: month, day: day) * 86_400 + hour * 3600 + minute * 60 + second - offsetSeconds
        return Double(unix - referenceUnixSeconds) + fraction
    }

    /// `YYYYMMDDTHHMMSSZ` for a moment, to name files.
    package static func compactUTC(secondsSinceReferenceDate interval: Double) -> String {
        let clamped = interval.isFinite ? min(max(interval, earliest), end - 1) : 0
        let text = civilText(unixSeconds: Int64(clamped.rounded(.down)) + referenceUnixSeconds)
        return text.filter { $0 != "-" && $0 != ":" } + "Z"
    }

    // MARK: Civil calendar (proleptic Gregorian; after Howard Hinnant's days_from_civil)

    /// `YYYY-MM-DDTHH:MM:SS` for seconds since 1970-01-01T00:00:00Z.
    private static func civilText(unixSeconds: Int64) -> String {
        let dayNumber = floorDivide(unixSeconds, 86_400)
        let secondOfDay = unixSeconds - dayNumber * 86_400
        let (year, month, day) = civil(days: dayNumber)
        return padded(year, width: 4) + "-" + padded(month, width: 2) + "-" + padded(day, width: 2) + "T"
            + padded(secondOfDay / 3600, width: 2) + ":" + padded(secondOfDay / 60 % 60, width: 2) + ":"
            + padded(secondOfDay % 60, width: 2)
    }

    private static func days(year: Int64, month: Int64, day: Int64) -> Int64 {
        let y = month <= 2 ? year - 1 : year
        let era = floorDivide(y, 400)
        let yearOfEra = y - era * 400
        let dayOfYear = (153 * (month > 2 ? month - 3 : month + 9) + 2) / 5 + day - 1
        let dayOfEra = yearOfEra * 365 + yearOfEra / 4 - yearOfEra / 100 + dayOfYear
        return era * 146_097 + dayOfEra - 719_468
    }

    private static func civil(days: Int64) -> (year: Int64, month: Int64, day: Int64) {
        let z = days + 719_468
        let era = floorDivide(z, 146_097)
        let dayOfEra = z - era * 146_097
        let yearOfEra = (dayOfEra - dayOfEra / 1460 + dayOfEra / 36_524 - dayOfEra / 146_096) / 365
        let dayOfYear = dayOfEra - (365 * yearOfEra + yearOfEra / 4 - yearOfEra / 100)
        let shiftedMonth = (5 * dayOfYear + 2) / 153
        let day = dayOfYear - (153 * shiftedMonth + 2) / 5 + 1
        let month = shiftedMonth < 10 ? shiftedMonth + 3 : shiftedMonth - 9
        return (yearOfEra + era * 400 + (month <= 2 ? 1 : 0), month, day)
    }

    private static func daysInMonth(year: Int64, month: Int64) -> Int64 {
        switch month {
        case 2: (year % 4 == 0 && year % 100 != 0) || year % 400 == 0 ? 29 : 28
        case 4, 6, 9, 11: 30
        default: 31
        }
    }

    private static func floorDivide(_ a: Int64, _ b: Int64) -> Int64 {
        a >= 0 ? a / b : -((-a + b - 1) / b)
    }

    private static func padded(_ value: Int64, width: Int) -> String {
        let digits = String(value)
        return digits.count >= width ? digits : String(repeating: "0", count: width - digits.count) + digits
    }
}
