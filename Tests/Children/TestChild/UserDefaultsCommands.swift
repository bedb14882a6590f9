import AnyDefaults
import Foundation

// The commands that compare a `userdefaults:` store with plain Foundation `UserDefaults` in the
// same process. The parent chooses the preferences directory through XDG_CONFIG_HOME, which
// Foundation reads only at start-up. What each does is in main.swift.

/// Plain `UserDefaults` on the suite a `userdefaults:` store string names.
private func plainDefaults(_ text: String) throws -> UserDefaults {
    guard let name = try suite(text) else { return .standard }
    guard let defaults = UserDefaults(suiteName: name) else { throw Failure(description: "UserDefaults refuses the suite \(name)") }
    return defaults
}

/// How a plain `UserDefaults` reader sees a value: its Swift type and its description.
private func plainDescription(_ object: Any?) -> String {
    guard let object else { return "nil" }
    return "\(type(of: object)) \(object)"
}

func whereIs(_ arguments: Arguments) throws {
    try arguments.expect(1...1)
    say(try UserDefaultsProvider.propertyListURL(forSuite: suite(arguments.text(0, "store")))?.path ?? "none")
}

func plainGet(_ arguments: Arguments) throws {
    try arguments.expect(2...2)
    say(plainDescription(try plainDefaults(arguments.text(0, "store")).object(forKey: arguments.text(1, "key"))))
}

func plainSet(_ arguments: Arguments) throws {
    try arguments.expect(2...2)
    let defaults = try plainDefaults(arguments.text(0, "store"))
    guard case .set(let key, let value) = try change(Substring(arguments.text(1, "change"))) else {
        throw Usage(description: "plain-set: a change that sets a value is expected")
    }
    switch value {
    case .int(let number): defaults.set(Int(number), forKey: key)
    case .double(let number): defaults.set(number, forKey: key)
    case .bool(let flag): defaults.set(flag, forKey: key)
    case .string(let text): defaults.set(text, forKey: key)
    default: throw Usage(description: "plain-set: int, double, bool or string")
    }
    defaults.synchronize()
}

func roundTrip(_ arguments: Arguments) throws {
    try arguments.expect(2...2)
    let text = try arguments.text(0, "store")
    guard case .set(let key, let value) = try change(Substring(arguments.text(1, "change"))) else {
        throw Usage(description: "round-trip: a change that sets a value is expected")
    }
    try provider(text).setValue(value, forKey: key)
    say(plainDescription(try plainDefaults(text).object(forKey: key)))
    say(try provider(text).value(forKey: key).map { "\($0)" } ?? "nil")
}
