// A first, minimal `anydefaults`: only `tour`, over the in-memory backend. The full command-line
// tool (read, write, delete, keys, export, import, migrate, watch, bench, verify) replaces it.
import AnyDefaultsCore
import AnyDefaultsMemory

let arguments = CommandLine.arguments.dropFirst()
guard arguments.first == "tour" else {
    FileHandle.standardError.write("usage: anydefaults tour\n")
    exit(64)
}

let store: any DefaultsProvider = InMemoryProvider()
let observation = store.observe { event in
    print("  event: \(event.key) -> \(event.newValue.map { String(describing: $0) } ?? "(removed)")")
}
do {
    print("AnyDefaults tour: one protocol, any backend.")
    print("Writing to the in-memory backend:")
    try store.setValue(.string("dark"), forKey: "ui.theme")
    try store.apply([.set("launchCount", .int(1)), .set("volume", .double(0.8))])
    print("Reading back:")
    for key in try store.keys().sorted() {
        print("  \(key) = \(String(describing: try store.value(forKey: key)))")
    }
    print("An empty key is refused with a typed error:")
    do { try store.setValue(.int(1), forKey: "") } catch { print("  \(error)") }
} catch {
    FileHandle.standardError.write("anydefaults: \(error)\n")
    exit(1)
}
observation.cancel()

import Foundation

extension FileHandle {
    func write(_ string: String) { write(Data(string.utf8)) }
}
