import AnyDefaults
import Foundation

/// Opens the store `text` names through `ProviderRegistry.standard`, without the cache unless
/// `cached`, and how to close it where the backend can be closed (the others stop when released).
func openStore(_ text: String, cached: Bool = false) throws(DefaultsError) -> (store: any DefaultsProvider, close: (() -> Void)?) {
    var configuration = try StoreConfiguration(parsing: text)
    configuration.cache = false
    let plain = try ProviderRegistry.standard.makeProvider(configuration)
    var close: (() -> Void)?
    if let sqlite = plain as? SQLiteProvider { close = { sqlite.close() } }
    #if canImport(AnyDefaultsLMDB)
    if let lmdb = plain as? LMDBProvider { close = { lmdb.close() } }
    #endif
    return (cached ? caching(plain) : plain, close)
}

/// The store `text` names, without the cache unless `cached`.
func provider(_ text: String, cached: Bool = false) throws(DefaultsError) -> any DefaultsProvider {
    try openStore(text, cached: cached).store
}

private func caching<Provider: DefaultsProvider>(_ provider: Provider) -> any DefaultsProvider { provider.cached() }

/// One change as the parent spells it: `key=7` sets an integer; `key:double=0.5`,
/// `key:string=text` and `key:bool=true` set those kinds; `-key` removes.
func change(_ text: Substring) throws(Usage) -> DefaultsChange {
    if text.hasPrefix("-") { return .remove(String(text.dropFirst())) }
    guard let equals = text.firstIndex(of: "=") else { throw Usage(description: "a change is key[:kind]=value or -key, not \(text)") }
    let name = text[..<equals]
    let value = String(text[text.index(after: equals)...])
    let (key, kind) = name.firstIndex(of: ":").map { (name[..<$0], name[name.index(after: $0)...]) } ?? (name, "int")
    switch kind {
    case "int":
        guard let number = Int64(value) else { throw Usage(description: "\(text): not an integer") }
        return .set(String(key), .int(number))
    case "double":
        guard let number = Double(value) else { throw Usage(description: "\(text): not a number") }
        return .set(String(key), .double(number))
    case "bool": return .set(String(key), .bool(value == "true"))
    case "string": return .set(String(key), .string(value))
    default: throw Usage(description: "\(text): the kinds are int, double, bool and string")
    }
}

/// A batch: changes separated by commas (`a=1,-b,c=3`).
func batch(_ text: some StringProtocol) throws(Usage) -> [DefaultsChange] {
    var changes: [DefaultsChange] = []
    for part in text.split(separator: ",") { changes.append(try change(Substring(part))) }
    return changes
}

/// The suite a `userdefaults:` store string names (`nil`: the standard suite).
func suite(_ text: String) throws -> String? {
    let configuration = try StoreConfiguration(parsing: text)
    guard configuration.scheme == "userdefaults" else { throw Usage(description: "\(text): a userdefaults: store is expected") }
    return configuration.location.isEmpty ? nil : configuration.location
}
