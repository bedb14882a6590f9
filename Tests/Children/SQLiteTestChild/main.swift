// A second process for the SQLite backend's tests. Commands:
//
//   write <path> <prefix> <count>   sets "<prefix>.<i>" to .int(i) for i in 0..<count, one write
//                                   each; exit status 1 and the error on stderr if one fails
//   batch <path> <prefix> <count>   the same in batches of 10, observed (so each is a transaction
//                                   that also reads the old values)
//   read <path> <key>               prints the value stored under key, or "nil"
//   readwrite <path> <key> [--unprivileged]
//                                   opens the store, reads key and prints "read <value or nil>", then
//                                   writes "probe" and prints "write ok"; a failure prints "error
//                                   <code> <path>" instead, and ends the run (status 0)
//   hold <path>                     prints "ready", then commits batches of 64 MiB in a loop until
//                                   killed (for a test to stop it while it holds the write lock)
//   serve <path>                    opens the store behind a cache (so it watches the store),
//                                   prints "ready", then for each line "key=<int>" read from
//                                   standard input sets it and prints "ok" (or "error <code>")
//   crash <path> <prefix> <count>   sets "<prefix>.<i>" to .int(i) for i in 0..<count in one batch,
//                                   then dies by SIGKILL: the commit stays in the -wal, not
//                                   checkpointed into the store file
//   open <path> [--unprivileged]    opens the store, reads and writes a key; prints "ok" or
//                                   "error <code> <path>"; with --unprivileged it first gives up
//                                   root (to user and group 65534), so permission checks apply
import AnyDefaultsCore
import AnyDefaultsSQLite
import Foundation

#if canImport(Glibc)
import Glibc
#elseif canImport(Darwin)
import Darwin
#endif

func fail(_ message: String) -> Never {
    FileHandle.standardError.write(Data("SQLiteTestChild: \(message)\n".utf8))
    exit(1)
}

let arguments = Array(CommandLine.arguments.dropFirst())
guard let command = arguments.first, arguments.count >= 2 else { fail("usage: write|read|open <path> ...") }
let path = arguments[1]

do {
    switch command {
    case "write":
        guard arguments.count == 4, let count = Int(arguments[3]) else { fail("usage: write <path> <prefix> <count>") }
        let store = try SQLiteProvider(path: path)
        for index in 0..<count {
            try store.setValue(.int(Int64(index)), forKey: "\(arguments[2]).\(index)")
        }
    case "batch":
        guard arguments.count == 4, let count = Int(arguments[3]) else { fail("usage: batch <path> <prefix> <count>") }
        let store = try SQLiteProvider(path: path)
        let observation = store.observe { _ in }
        for start in stride(from: 0, to: count, by: 10) {
            try store.apply((start..<min(start + 10, count)).map { .set("\(arguments[2]).\($0)", .int(Int64($0))) })
        }
        observation.cancel()
    case "readwrite":
        guard arguments.count >= 3 else { fail("usage: readwrite <path> <key> [--unprivileged]") }
        if arguments.dropFirst(3).contains("--unprivileged"), geteuid() == 0 {
            guard setgid(65534) == 0, setuid(65534) == 0 else { fail("could not give up root") }
        }
        do throws(DefaultsError) {
            let store = try SQLiteProvider(path: path)
            print("read \(try store.value(forKey: arguments[2]).map { "\($0)" } ?? "nil")")
            try store.setValue(.bool(true), forKey: "probe")
            print("write ok")
        } catch {
            print("error \(error.code) \(error.path ?? "-")")
        }
    case "crash":
        guard arguments.count == 4, let count = Int(arguments[3]) else { fail("usage: crash <path> <prefix> <count>") }
        let store = try SQLiteProvider(path: path)
        try store.apply((0..<count).map { .set("\(arguments[2]).\($0)", .int(Int64($0))) })
        kill(getpid(), SIGKILL)
    case "hold":
        let store = try SQLiteProvider(path: path)
        FileHandle.standardOutput.write(Data("ready\n".utf8))
        for round in 0... {
            try store.apply((0..<64).map { .set("hold.\($0)", .data(Data(repeating: UInt8(truncatingIfNeeded: round), count: 1 << 20))) })
        }
    case "serve":
        let store = try SQLiteProvider(path: path).cached()
        // Unbuffered: the parent waits for each line.
        func say(_ line: String) { FileHandle.standardOutput.write(Data((line + "\n").utf8)) }
        say("ready")
        while let line = readLine() {
            let parts = line.split(separator: "=")
            guard parts.count == 2, let value = Int64(parts[1]) else { fail("bad line \(line)") }
            do throws(DefaultsError) {
                try store.setValue(.int(value), forKey: String(parts[0]))
                say("ok")
            } catch {
                say("error \(error.code) \(error)")
            }
        }
    case "read":
        guard arguments.count == 3 else { fail("usage: read <path> <key>") }
        let value = try SQLiteProvider(path: path).value(forKey: arguments[2])
        print(value.map { "\($0)" } ?? "nil")
    case "open":
        if arguments.dropFirst(2).contains("--unprivileged"), geteuid() == 0 {
            guard setgid(65534) == 0, setuid(65534) == 0 else { fail("could not give up root") }
        }
        do throws(DefaultsError) {
            let store = try SQLiteProvider(path: path)
            _ = try store.value(forKey: "probe")
            try store.setValue(.bool(true), forKey: "probe")
            print("ok")
        } catch {
            print("error \(error.code) \(error.path ?? "-")")
        }
    default:
        fail("unknown command \(command)")
    }
} catch {
    fail("\(error)")
}
