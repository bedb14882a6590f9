// A child process for the UserDefaults backend's tests: runs one provider or plain-Foundation
// operation and prints the outcome on standard output, one line per item. The parent chooses the
// preferences directory through XDG_CONFIG_HOME, which Foundation reads only at start-up.
import AnyDefaultsCore
import AnyDefaultsUserDefaults
import Foundation

#if canImport(Glibc)
import Glibc
#elseif canImport(Darwin)
import Darwin
#endif

func fail(_ message: String) -> Never {
    FileHandle.standardError.write(Data((message + "\n").utf8))
    exit(2)
}

/// `nil` names the standard suite.
func suite(_ name: String) -> String? { name == "-" ? nil : name }

/// A value given as a kind and its text: `int 5`, `double 1.5`, `bool true`, `string text`.
func value(_ kind: String, _ text: String) -> DefaultsValue {
    switch kind {
    case "int": .int(Int64(text) ?? 0)
    case "double": .double(Double(text) ?? 0)
    case "bool": .bool(text == "true")
    default: .string(text)
    }
}

/// How a plain `UserDefaults` reader sees a value: its Swift type and its description.
func plainDescription(_ object: Any?) -> String {
    guard let object else { return "nil" }
    return "\(type(of: object)) \(object)"
}

func run(_ arguments: [String]) throws(DefaultsError) {
    guard let command = arguments.first else { fail("usage: UserDefaultsTestChild <command> ...") }
    let rest = Array(arguments.dropFirst())
    func argument(_ index: Int) -> String {
        guard index < rest.count else { fail("\(command): missing argument \(index + 1)") }
        return rest[index]
    }
    switch command {
    case "where":
        // where <suite>: the file the provider uses.
        print(try UserDefaultsProvider.propertyListURL(forSuite: suite(argument(0)))?.path ?? "none")
    case "set":
        // set <suite> <key> <kind> <text>: stores through the provider.
        try UserDefaultsProvider(suiteName: suite(argument(0))).setValue(value(argument(2), argument(3)), forKey: argument(1))
    case "get":
        // get <suite> <key>: reads through the provider.
        let read = try UserDefaultsProvider(suiteName: suite(argument(0))).value(forKey: argument(1))
        print(read.map { "\($0)" } ?? "nil")
    case "count":
        // count <suite>: how many keys the provider sees.
        print(try UserDefaultsProvider(suiteName: suite(argument(0))).keys().count)
    case "plain-get":
        // plain-get <suite> <key>: reads through plain UserDefaults.
        let defaults = suite(argument(0)).map { UserDefaults(suiteName: $0)! } ?? .standard
        print(plainDescription(defaults.object(forKey: argument(1))))
    case "plain-set":
        // plain-set <suite> <key> <kind> <text>: writes through plain UserDefaults and synchronizes.
        let defaults = suite(argument(0)).map { UserDefaults(suiteName: $0)! } ?? .standard
        switch argument(2) {
        case "int": defaults.set(Int(argument(3)) ?? 0, forKey: argument(1))
        case "double": defaults.set(Double(argument(3)) ?? 0, forKey: argument(1))
        case "bool": defaults.set(argument(3) == "true", forKey: argument(1))
        default: defaults.set(argument(3), forKey: argument(1))
        }
        defaults.synchronize()
    case "round-trip":
        // round-trip <suite> <key> <kind> <text>: provider writes, then plain UserDefaults in
        // this process reads, then a second provider instance reads.
        let store = try UserDefaultsProvider(suiteName: suite(argument(0)))
        try store.setValue(value(argument(2), argument(3)), forKey: argument(1))
        let defaults = suite(argument(0)).map { UserDefaults(suiteName: $0)! } ?? .standard
        print(plainDescription(defaults.object(forKey: argument(1))))
        print(try UserDefaultsProvider(suiteName: suite(argument(0))).value(forKey: argument(1)).map { "\($0)" } ?? "nil")
    case "write-many":
        // write-many <suite> <prefix> <count>: one write per key, for lost-update checks.
        let store = try UserDefaultsProvider(suiteName: suite(argument(0)))
        for index in 0..<(Int(argument(2)) ?? 0) {
            try store.setValue(.int(Int64(index)), forKey: "\(argument(1))-\(index)")
        }
    case "hold-lock":
        // hold-lock <directory> <seconds>: holds the preferences directory's lock, as a writer
        // in the middle of a write would; prints "locked" once it holds it.
        let descriptor = open(argument(0), O_RDONLY | O_DIRECTORY)
        guard descriptor >= 0, flock(descriptor, LOCK_EX) == 0 else { fail("cannot lock \(argument(0))") }
        FileHandle.standardOutput.write(Data("locked\n".utf8))
        usleep(useconds_t((Double(argument(1)) ?? 1) * 1_000_000))
    case "set-timeout":
        // set-timeout <suite> <key> <milliseconds>: a write that waits at most that long.
        let options = UserDefaultsProvider.Options(lockTimeout: .milliseconds(Int(argument(2)) ?? 0))
        try UserDefaultsProvider(suiteName: suite(argument(0)), options: options).setValue(.int(1), forKey: argument(1))
    default:
        fail("unknown command \(command)")
    }
}

do {
    try run(Array(CommandLine.arguments.dropFirst()))
} catch {
    print("error \(error.code)")
    FileHandle.standardError.write(Data("\(error)\n".utf8))
    exit(1)
}
