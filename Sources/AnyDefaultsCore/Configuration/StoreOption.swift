/// An option a backend accepts in its store string, declared when the backend is registered so
/// that unknown options are rejected and errors can list what is accepted.
///
/// ```swift
/// StoreOption("durability", values: "normal|full", summary: "fsync policy (default normal)")
/// ```
public struct StoreOption: Sendable, Hashable, CustomStringConvertible {
    /// The option's name, lower-case.
    public var name: String
    /// The accepted values, as shown to people (`"normal|full"`, `"a size such as 64MiB"`).
    public var values: String
    /// What the option does.
    public var summary: String
    /// Older or other spellings of the name that a store string may use instead (lower-case);
    /// the registry reads them as ``name``.
    public var aliases: [String]

    public init(_ name: String, values: String, summary: String, aliases: [String] = []) {
        self.name = name.lowercased()
        self.values = values
        self.summary = summary
        self.aliases = aliases.map { $0.lowercased() }
    }

    public var description: String { "\(name)=\(values)" }

    /// This option, also accepted under `alias`.
    public func aliased(_ alias: String) -> StoreOption {
        var option = self
        option.aliases.append(alias.lowercased())
        return option
    }

    /// `recovery=fail|moveaside`, the one spelling of every backend that can find its file
    /// damaged: throw (default), or keep the damaged file aside and start empty. Read it with
    /// ``StoreConfiguration/recoveryOption()``.
    public static let recovery = StoreOption(
        "recovery", values: "fail|moveaside", summary: "a damaged file: throw (default), or keep it aside and start empty")

    /// `locktimeout=SECONDS`, the one spelling of how long a write waits for another process.
    /// Read it with ``StoreConfiguration/lockTimeoutOption(defaultSeconds:)``.
    public static func lockTimeout(defaultSeconds: Int) -> StoreOption {
        StoreOption("locktimeout", values: "seconds", summary: "how long a write waits for another process (default \(defaultSeconds))")
    }
}

extension StoreConfiguration {
    /// The value of option `name` as one of `choices` (compared case-insensitively), or `default`
    /// when the option is absent.
    ///
    /// ```swift
    /// let durability = try configuration.option("durability", choices: ["normal": .normal, "full": .full], default: .normal)
    /// ```
    public func option<T>(_ name: String, choices: [String: T], default defaultValue: T) throws(DefaultsError) -> T {
        guard let raw = options[name] else { return defaultValue }
        guard let value = choices[raw.lowercased()] else {
            throw Self.error("The option \(name)=\(raw) is not accepted by \(scheme):; use one of \(choices.keys.sorted().joined(separator: ", ")).")
        }
        return value
    }

    /// Whether ``StoreOption/recovery`` asks to move a damaged file aside (`moveaside`, or `on`
    /// in the older `recover=on|off` spelling); `false` when absent.
    public func recoveryOption() throws(DefaultsError) -> Bool {
        try option("recovery", choices: ["fail": false, "moveaside": true, "off": false, "on": true], default: false)
    }

    /// ``StoreOption/lockTimeout(defaultSeconds:)``'s value, from 0 to 86,400 seconds.
    public func lockTimeoutOption(defaultSeconds: Int) throws(DefaultsError) -> Duration {
        .seconds(try intOption("locktimeout", in: 0...86_400, default: defaultSeconds))
    }

    /// The value of option `name` as on/off, or `default` when absent.
    public func boolOption(_ name: String, default defaultValue: Bool) throws(DefaultsError) -> Bool {
        guard let raw = options[name] else { return defaultValue }
        return try Self.parseOnOff(raw, option: name)
    }

    /// The value of option `name` as a whole number in `range`, or `default` when absent.
    public func intOption(_ name: String, in range: ClosedRange<Int>, default defaultValue: Int) throws(DefaultsError) -> Int {
        guard let raw = options[name] else { return defaultValue }
        guard let value = Int(raw), range.contains(value) else {
            throw Self.error("The option \(name)=\(raw) is not accepted by \(scheme):; use a whole number from \(range.lowerBound) to \(range.upperBound).")
        }
        return value
    }

    /// The value of option `name` as a number of bytes (`4096`, `512KiB`, `64MiB`, `1GiB`, `10MB`),
    /// or `default` when absent.
    public func byteCountOption(_ name: String, default defaultValue: Int) throws(DefaultsError) -> Int {
        guard let raw = options[name] else { return defaultValue }
        let units: [(String, Int)] = [
            ("kib", 1 << 10), ("mib", 1 << 20), ("gib", 1 << 30), ("tib", 1 << 40),
            ("kb", 1_000), ("mb", 1_000_000), ("gb", 1_000_000_000), ("tb", 1_000_000_000_000),
            ("k", 1 << 10), ("m", 1 << 20), ("g", 1 << 30), ("b", 1),
        ]
        let text = raw.lowercased().trimmingCharacters(in: .whitespaces)
        var multiplier = 1
        var number = Substring(text)
        for (suffix, factor) in units where text.hasSuffix(suffix) {
            multiplier = factor
            number = text.dropLast(suffix.count)
            break
        }
        guard let count = Int(number.trimmingCharacters(in: .whitespaces)), count > 0,
            case let (bytes, overflow) = count.multipliedReportingOverflow(by: multiplier), !overflow
        else {
            throw Self.error("The option \(name)=\(raw) is not accepted by \(scheme):; use a positive size such as 4096, 512KiB, 64MiB or 1GiB.")
        }
        return bytes
    }
}

import Foundation
