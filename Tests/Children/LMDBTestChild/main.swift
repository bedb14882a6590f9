// A child process for the LMDB backend's multi-process tests.
//
//   LMDBTestChild write <path> <prefix> <count>     set <prefix>-<i> = .int(i), one write each
//   LMDBTestChild grow <path> <key> <bytes>         set <key> = .data of <bytes> bytes (initial map 64 KiB)
//   LMDBTestChild open <path> [--as-nobody]         open the store and report the outcome
//   LMDBTestChild readwrite <path> <key> [--as-nobody]
//                                                   open the store, read key ("read <value or nil>"),
//                                                   write "probe" ("write ok"); a failure prints
//                                                   "error <code>: ..." and ends the run (status 1)
//   LMDBTestChild crash <path> <key> <value>        set <key> = .string(<value>) with .noSync, then
//                                                   die by SIGKILL without closing anything
//   LMDBTestChild fill <path>                       write 64 KiB values until a write fails; print
//                                                   "full <count> <code>", then check that every
//                                                   value written reads back ("kept <count>")
//   LMDBTestChild hold <path>                       commit batches of 64 MiB in a loop until killed
//                                                   (for a test to stop it while it holds the write lock)
//   LMDBTestChild stress <path> <id> <generation>   observe the store (initial map 64 KiB) and, until
//                                                   killed: two threads commit batches, one grows and
//                                                   shrinks a blob, one reads (LMDBStressTests)
//
// Prints "ok" on success, or the error code on a line of its own ("error <code>: <description>")
// and exits with status 1.
import AnyDefaultsCore
import AnyDefaultsLMDB
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

func run(_ arguments: [String]) throws(DefaultsError) {
    guard arguments.count >= 2 else { fail("usage: LMDBTestChild write|grow|open <path> ...") }
    let path = arguments[1]
    switch arguments[0] {
    case "write":
        guard arguments.count == 4, let count = Int(arguments[3]) else { fail("usage: write <path> <prefix> <count>") }
        let store = try LMDBProvider(path: path)
        for index in 0..<count {
            try store.setValue(.int(Int64(index)), forKey: "\(arguments[2])-\(index)")
        }
    case "grow":
        guard arguments.count == 4, let size = Int(arguments[3]) else { fail("usage: grow <path> <key> <bytes>") }
        let store = try LMDBProvider(path: path, options: .init(initialMapSize: 64 << 10))
        try store.setValue(.data(Data(repeating: 0xA5, count: size)), forKey: arguments[2])
    case "open":
        if arguments.dropFirst(2).contains("--as-nobody"), getuid() == 0 {
            // Root ignores file permissions; run as an ordinary user to meet them.
            guard setgid(65534) == 0, setuid(65534) == 0 else { fail("could not drop privileges") }
        }
        let store = try LMDBProvider(path: path)
        _ = try store.keys()
    case "readwrite":
        guard arguments.count >= 3 else { fail("usage: readwrite <path> <key> [--as-nobody]") }
        if arguments.dropFirst(3).contains("--as-nobody"), getuid() == 0 {
            guard setgid(65534) == 0, setuid(65534) == 0 else { fail("could not drop privileges") }
        }
        let store = try LMDBProvider(path: path)
        say("read \(try store.value(forKey: arguments[2]).map { "\($0)" } ?? "nil")")
        try store.setValue(.bool(true), forKey: "probe")
        say("write ok")
    case "crash":
        guard arguments.count == 4 else { fail("usage: crash <path> <key> <value>") }
        let store = try LMDBProvider(path: path, options: .init(durability: .noSync))
        try store.setValue(.string(arguments[3]), forKey: arguments[2])
        kill(getpid(), SIGKILL)
    case "fill":
        let store = try LMDBProvider(path: path, options: .init(initialMapSize: 64 << 10))
        var count = 0
        var failure: DefaultsError?
        while failure == nil {
            do throws(DefaultsError) {
                try store.setValue(.data(Data(repeating: UInt8(count & 0xFF), count: 64 << 10)), forKey: "fill.\(count)")
                count += 1
            } catch {
                failure = error
            }
        }
        say("full \(count) \(failure?.code.description ?? "-")")
        for index in 0..<count where try store.value(forKey: "fill.\(index)") != .data(Data(repeating: UInt8(index & 0xFF), count: 64 << 10)) {
            fail("fill.\(index) is not what was written")
        }
        say("kept \(count)")
    case "hold":
        let store = try LMDBProvider(path: path, options: .init(maximumMapSize: 4 << 30, durability: .noSync))
        say("ready")
        for round in 0... {
            try store.apply((0..<64).map { .set("hold.\($0)", .data(Data(repeating: UInt8(truncatingIfNeeded: round), count: 1 << 20))) })
        }
    case "stress":
        guard arguments.count == 4, let id = Int(arguments[2]), let generation = Int64(arguments[3]) else {
            fail("usage: stress <path> <id> <generation>")
        }
        try stress(path: path, id: id, firstGeneration: generation)
    default:
        fail("unknown command \(arguments[0])")
    }
}

do {
    try run(Array(CommandLine.arguments.dropFirst()))
    print("ok")
} catch {
    print("error \(error.code): \(error)")
    exit(1)
}
