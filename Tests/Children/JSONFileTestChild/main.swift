// A separate process for the JSON file backend's multi-process tests.
//
//   JSONFileTestChild write <path> <prefix> <count>   sets <prefix>.0 ... <prefix>.<count-1> to their index, one write each
//   JSONFileTestChild set <path> <key> <integer>      sets one key
//   JSONFileTestChild get <path> <key>                prints the value, or "absent"
//   JSONFileTestChild hold-lock <path> <seconds>      holds the writers' lock, prints "locked" once it has it
//   JSONFileTestChild write-forever <path>            rewrites the file until it is killed
import AnyDefaultsCore
import AnyDefaultsJSONFile
import Foundation

#if canImport(Glibc)
import Glibc
#elseif canImport(Darwin)
import Darwin
#endif

func fail(_ message: String) -> Never {
    FileHandle.standardError.write(Data((message + "\n").utf8))
    exit(1)
}

let arguments = Array(CommandLine.arguments.dropFirst())
guard arguments.count >= 2 else { fail("usage: JSONFileTestChild <command> <path> ...") }
let path = arguments[1]

do {
    switch (arguments[0], arguments.count) {
    case ("write", 4):
        guard let count = Int(arguments[3]) else { fail("count must be an integer") }
        let store = try JSONFileProvider(path: path)
        for index in 0..<count {
            try store.setValue(.int(Int64(index)), forKey: "\(arguments[2]).\(index)")
        }
    case ("set", 4):
        guard let value = Int64(arguments[3]) else { fail("value must be an integer") }
        try JSONFileProvider(path: path).setValue(.int(value), forKey: arguments[2])
    case ("get", 3):
        let value = try JSONFileProvider(path: path).value(forKey: arguments[2])
        print(value.map { "\($0)" } ?? "absent")
    case ("hold-lock", 3):
        guard let seconds = Double(arguments[2]) else { fail("seconds must be a number") }
        let descriptor = open(path + ".lock", O_RDWR | O_CREAT, 0o600)
        guard descriptor >= 0, flock(descriptor, LOCK_EX) == 0 else { fail("could not lock") }
        FileHandle.standardOutput.write(Data("locked\n".utf8))
        usleep(UInt32(seconds * 1_000_000))
    case ("write-forever", 2):
        let store = try JSONFileProvider(path: path)
        var index: Int64 = 0
        while true {
            index += 1
            // Vary the size, so that a torn write would show.
            try store.apply([
                .set("counter", .int(index)),
                .set("payload", .string(String(repeating: "x", count: Int(index % 5000)))),
            ])
        }
    default:
        fail("unknown command or wrong number of arguments: \(arguments)")
    }
} catch {
    fail("\(error)")
}
