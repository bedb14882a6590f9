// The one child process of the package's tests: a real second process for the multi-process,
// crash, permission, external-change and conformance tests, and for what uses process-wide state.
// Every command names its store by store string, opened through `ProviderRegistry.standard`
// without the cache (unless said otherwise): backend options go in the string
// (`lmdb:/tmp/x/store?mapsize=64KiB&durability=nosync`).
//
// Conventions: output goes to standard output one line at a time, unbuffered. A store's error
// ends the command with `error <code> [<path>]` on standard output, its description on standard
// error, and status 1; a bad command line exits with 64; a failed check of the child's own with 2.
// Changes are spelled `key=7` (an integer), `key:double=0.5`, `key:string=text`, `key:bool=true`,
// `-key` (a removal); `a=1,-b,c=3` is one batch of them.
//
// Any store:
//   write <store> <prefix> <count>    sets <prefix>.0 … <prefix>.<count-1> to their index, one write each
//   batch <store> <prefix> <count>    the same in batches of 10, observed (each a transaction that also reads)
//   apply <store> <batch|clear>...    makes each argument one write: a batch, or clear (removes every key)
//   get <store> <key>                 prints the value, or "nil"
//   count <store>                     prints the number of keys
//   open <store> [--unprivileged]     opens the store, reads and writes the key "probe", prints "ok"
//   readwrite <store> <key> [--unprivileged]
//                                     prints "read <value or nil>", then writes "probe" and prints "write ok"
//                                     (--unprivileged: as root, first becomes user and group 65534)
//   crash <store> <change>...         applies the changes in one batch, then dies by SIGKILL
//   hold <store>                      prints "ready", then commits batches of 64 MiB until killed
//                                     (for a test to stop it while it holds the write lock)
//   hold-lock <store> <seconds>       holds the writers' lock of a json:, userdefaults:, lmdb: or
//                                     sqlite: store; prints "locked" once it has it
//   hog-lock <store> <seconds>        holds the same lock 20 ms at a time, spinning, and takes it
//                                     again at once, for <seconds>; prints "locked" once it has it
//   hold-reader <lmdb dir>            opens the LMDB store with liblmdb, begins a read transaction,
//                                     prints "reading" and holds it until killed
//   write-forever <store>             rewrites "counter" and a payload of varying size until killed
//   fill <store>                      writes 64 KiB values until a write fails, prints "full <count> <code>",
//                                     checks that every value written reads back, prints "kept <count>"
//   write-bytes <store> <key> <bytes> sets <key> to <bytes> bytes of 0xA5
//   serve <store>                     opens the store behind a cache, prints "ready", then makes each
//                                     line of standard input (a batch) one write and prints "ok" once
//                                     it returned, or the error line (and goes on)
//   watch <store> <count>             observes the store, prints "ready", then the first <count> events
//                                     as key=value (key=nil for a removal); status 2 if they do not all
//                                     arrive within 10 s
//   leaks <store with {n}> <count>    opens <count> stores, {n} replaced by 0, 1, …, twenty at a time,
//                                     each observed (every other one behind a cache) and written once,
//                                     then closes (where the backend can) and releases them; prints the
//                                     process's resources (ProcessResources): before, while the first
//                                     twenty are open, and after (once settled, up to 8 s). Linux only.
//   stress <store> <id> <generation>  observes the store and, until killed: two threads commit batches
//                                     (printing "ack <thread> <generation>"), one grows and shrinks a
//                                     blob, one reads (LMDBStressTests)
//
// Reliability (Tests/ReliabilityTests, scripts/crash-test):
//   workload <store> <seed> <first-generation>
//       Runs the crash workload from <first-generation> on, forever, printing "ack <generation>"
//       after each write returns. Meant to be killed.
//   check <store> <seed> <state-file> <acknowledged>
//       Opens the store after a kill and checks it against the workload: every key holds its last
//       acknowledged value or the one of the write in flight, never a torn or older one, and the
//       write in flight is all or nothing on stores that claim atomic batches. Records what it
//       found in <state-file> for the next check. Prints "ok ..." or the failures (status 1).
//   hammer <store> <id> <threads> <count> [<go-file>]
//       Writes distinct keys and one shared key from <threads> threads at once, while a reader
//       checks that batches are never seen half applied. Prints "ok" or the failures (status 1).
//   touch <store>
//       Writes a few keys under umask 0, so that the store creates its files with exactly the modes
//       it asks for (and has some pages of data to damage).
//   keep-writing <store> <id> <slots> <stop-file>
//       Writes n = 1, 2, ... until <stop-file> exists, each to a key of slot n % <slots>, and
//       prints "ack <key> <n>" after each write returns, then "done". A slot's key is written a
//       few times and then retired for a new one (w<id>.s<slot>.g<generation>), as a user sets a
//       setting now and then: the last write of each key is final.
//   standard-write <key> <value>
//       Writes the string <value> under <key> through Defaults.standard, as an app does (the
//       store `anydefaults --app TestChild` must open), and prints "ok".
//   writes <store> <count> [durable]
//       Writes <count> different values to one key (each its own commit), then with `durable`
//       calls makeDurable(), prints "ok"; the durability tests count the syncs.
//   empties <store> <count>
//       Like writes, but each time sets the only key and removes it again, emptying the store.
//   writes-after <first-store> <store> <count>
//       Writes once to <first-store>, then <count> times to <store> (the same LMDB environment
//       with another durability): a provider's own durability must hold on a shared environment.
//   read-all <store>
//       Reads every key: prints "read <count>", or the error line.
//
// A userdefaults: store and plain Foundation UserDefaults in this process (`userdefaults:` alone
// is the standard suite, this process's own domain):
//   where <store>                     prints the property list file the provider uses
//   plain-get <store> <key>           prints how plain UserDefaults reads the key: "<Swift type> <value>" or "nil"
//   plain-set <store> <change>        sets the value through plain UserDefaults and synchronizes
//   round-trip <store> <change>       the provider writes; plain UserDefaults here reads (printed as
//                                     plain-get does); a second provider instance reads (printed as get)
//
// Combine (Tests/AnyDefaultsCombineTests), on Defaults.standard (ANYDEFAULTS_STORE):
//   combine-docs                      runs the examples of Docs/Combine.md (Combine/DocumentationExamples.swift)
//   combine-migrate                   one launch of a program that migrates "count" to "index" (the
//                                     documented `Service`): prints "index=<index> count=<count or none>"
//   combine-mock <path>               sets the process-wide mock flag, uses properties (reads, writes,
//                                     subscriptions, a migration), prints what they published and whether
//                                     a file is at <path> (the store's, which must not have been opened);
//                                     then clears the flag and writes through a new property ("stored=<volume>")
//
// The conformance suite's child (started by the suite, not by hand):
//   conformance                       the store ANYDEFAULTS_CONFORMANCE_STORE names
//   conformance-broken <defect>       a deliberately broken provider (Tests/BrokenProviders)
import AnyDefaults
import Foundation

let commands: [String: (Arguments) throws -> Int32] = [
    "write": { try write($0); return 0 },
    "batch": { try writeBatches($0); return 0 },
    "apply": { try apply($0); return 0 },
    "get": { try get($0); return 0 },
    "count": { try count($0); return 0 },
    "open": { try openAndProbe($0); return 0 },
    "readwrite": { try readWrite($0); return 0 },
    "crash": { try crash($0); return 0 },
    "hold": { try hold($0); return 0 },
    "hold-lock": { try holdLock($0); return 0 },
    "hog-lock": { try hogLock($0); return 0 },
    "hold-reader": { try holdReader($0); return 0 },
    "write-forever": { try writeForever($0); return 0 },
    "fill": { try fill($0); return 0 },
    "write-bytes": { try writeBytes($0); return 0 },
    "serve": { try serve($0); return 0 },
    "watch": { try watch($0); return 0 },
    "leaks": { try leaks($0); return 0 },
    "stress": { arguments in
        try arguments.expect(3...3)
        try stress(store: arguments.text(0, "store"), id: arguments.int(1, "id"), firstGeneration: Int64(arguments.int(2, "generation")))
    },
    "workload": { try workload($0); return 0 },
    "check": { try check($0) },
    "hammer": { try hammer($0) },
    "touch": { try touch($0); return 0 },
    "keep-writing": { try keepWriting($0); return 0 },
    "standard-write": { try standardWrite($0); return 0 },
    "writes": { try writes($0); return 0 },
    "empties": { try empties($0); return 0 },
    "writes-after": { try writesAfter($0); return 0 },
    "read-all": { try readAll($0); return 0 },
    "where": { try whereIs($0); return 0 },
    "plain-get": { try plainGet($0); return 0 },
    "plain-set": { try plainSet($0); return 0 },
    "round-trip": { try roundTrip($0); return 0 },
    "combine-docs": { try combineDocs($0); return 0 },
    "combine-migrate": { try combineMigrate($0); return 0 },
    "combine-mock": { try combineMock($0); return 0 },
    "conformance": { try conformance($0) },
    "conformance-broken": { try conformanceBroken($0) },
]

let name = CommandLine.arguments.dropFirst().first ?? ""
let arguments = Arguments(command: name, values: Array(CommandLine.arguments.dropFirst(2)))
do {
    guard let command = commands[name] else {
        throw Usage(description: "usage: TestChild <command> <store> ... (commands: \(commands.keys.sorted().joined(separator: ", ")); see main.swift)")
    }
    exit(try command(arguments))
} catch let error as DefaultsError {
    say(errorLine(error))
    complain("\(name): \(error)")
    exit(1)
} catch let usage as Usage {
    complain(usage.description)
    exit(64)
} catch let failure as Failure {
    complain("\(name): \(failure.description)")
    exit(failure.status)
} catch {
    complain("\(name): \(error)")
    exit(2)
}
