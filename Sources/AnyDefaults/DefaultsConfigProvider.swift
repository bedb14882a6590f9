import AnyDefaultsCore
import Configuration
import Foundation
import Synchronization

/// A swift-configuration `ConfigProvider` over any AnyDefaults store, so that a server reads its
/// settings through `ConfigReader` and sees them change live.
///
/// ```swift
/// let store = try ProviderRegistry.standard.makeProvider("postgres://app@db.internal/settings?namespace=api")
/// let config = ConfigReader(providers: [EnvironmentVariablesProvider(), DefaultsConfigProvider(store)])
/// let limit = config.int(forKey: "limits.requestsPerMinute", default: 600)
/// try await config.watchInt(forKey: "limits.requestsPerMinute", default: 600) { updates in
///     for await limit in updates { limiter.setLimit(limit) }      // every change, from any machine
/// }
/// ```
///
/// A configuration key's components, joined with `separator` (`.`) and put after `prefix`, are the
/// store's key: `["limits", "requestsPerMinute"]` reads `limits.requestsPerMinute`. Values convert
/// where nothing is lost: an `.int` reads as an int or a double, a whole `.double` as an int, `0`
/// and `1` as booleans, a string holding a number or boolean as one (as environment variables do),
/// `.data` as bytes, arrays of such values as arrays. Anything else is a
/// ``DefaultsError/Code-swift.struct/typeMismatch``, naming the key.
///
/// Watching uses the store's change events, so it sees what the store reports: changes through
/// this process, and on backends with ``DefaultsCapabilities/externalChanges`` (JSON file,
/// SQLite, LMDB, UserDefaults on Linux, PostgreSQL) those of other processes and machines. Reads
/// are the store's reads (from memory for a cached store or PostgreSQL's replica); `fetchValue`
/// reads the same way.
@available(macOS 15, iOS 18, tvOS 18, watchOS 11, visionOS 2, *)
public final class DefaultsConfigProvider: ConfigProvider, Sendable {
    /// The store read.
    public let store: any DefaultsProvider
    /// Put before every key.
    public let prefix: String
    /// Joins a configuration key's components.
    public let separator: String
    /// Keys (full store keys) whose values are marked secret, so that access reporters redact them.
    public let secretKeys: Set<String>
    public let providerName: String

    /// A provider over `store`.
    public init(
        _ store: any DefaultsProvider, prefix: String = "", separator: String = ".", secretKeys: Set<String> = [],
        name: String? = nil
    ) {
        self.store = store
        self.prefix = prefix
        self.separator = separator
        self.secretKeys = secretKeys
        providerName = "DefaultsConfigProvider" + (name.map { "[\($0)]" } ?? "")
    }

    /// A provider over the store of `defaults`, under its scope's prefix.
    public convenience init(_ defaults: Defaults, separator: String = ".", secretKeys: Set<String> = [], name: String? = nil) {
        self.init(defaults.provider, prefix: defaults.prefix, separator: separator, secretKeys: secretKeys, name: name)
    }

    /// The store key of a configuration key.
    public func storeKey(_ key: AbsoluteConfigKey) -> String {
        prefix + key.components.joined(separator: separator)
    }

    public func value(forKey key: AbsoluteConfigKey, type: ConfigType) throws -> LookupResult {
        let name = storeKey(key)
        return try lookup(name, try store.value(forKey: name), type: type)
    }

    // The protocol's async requirements run on the caller's executor (swift-configuration builds
    // with NonisolatedNonsendingByDefault), so these say so explicitly.

    nonisolated(nonsending) public func fetchValue(forKey key: AbsoluteConfigKey, type: ConfigType) async throws -> LookupResult {
        try value(forKey: key, type: type)
    }

    nonisolated(nonsending) public func watchValue<Return: ~Copyable>(
        forKey key: AbsoluteConfigKey, type: ConfigType,
        updatesHandler: nonisolated(nonsending) (_ updates: ConfigUpdatesAsyncSequence<Result<LookupResult, any Error>, Never>) async throws -> Return
    ) async throws -> Return {
        let name = storeKey(key)
        let (stream, continuation) = AsyncStream<Result<LookupResult, any Error>>.makeStream(bufferingPolicy: .bufferingNewest(1))
        // Observe first, then read: a change in between is not lost (at worst read twice).
        let observation = store.observe { [self] event in
            guard event.key == name else { return }
            continuation.yield(Result { try lookup(name, event.newValue, type: type) })
        }
        defer {
            observation.cancel()
            continuation.finish()
        }
        continuation.yield(Result { try value(forKey: key, type: type) })
        return try await updatesHandler(ConfigUpdatesAsyncSequence(stream))
    }

    public func snapshot() -> any ConfigSnapshot {
        Snapshot(provider: self, values: (try? store.allValues()) ?? [:])
    }

    nonisolated(nonsending) public func watchSnapshot<Return: ~Copyable>(
        updatesHandler: nonisolated(nonsending) (_ updates: ConfigUpdatesAsyncSequence<any ConfigSnapshot, Never>) async throws -> Return
    ) async throws -> Return {
        let (stream, continuation) = AsyncStream<any ConfigSnapshot>.makeStream(bufferingPolicy: .bufferingNewest(1))
        let observation = store.observe { [self] _ in continuation.yield(snapshot()) }
        defer {
            observation.cancel()
            continuation.finish()
        }
        continuation.yield(snapshot())
        return try await updatesHandler(ConfigUpdatesAsyncSequence(stream))
    }

    /// The store's values at one moment.
    struct Snapshot: ConfigSnapshot {
        let provider: DefaultsConfigProvider
        let values: [String: DefaultsValue]

        var providerName: String { provider.providerName }

        func value(forKey key: AbsoluteConfigKey, type: ConfigType) throws -> LookupResult {
            let name = provider.storeKey(key)
            return try provider.lookup(name, values[name], type: type)
        }
    }

    // MARK: Conversion

    func lookup(_ name: String, _ stored: DefaultsValue?, type: ConfigType) throws(DefaultsError) -> LookupResult {
        guard let stored else { return LookupResult(encodedKey: name, value: nil) }
        guard let content = Self.content(stored, as: type) else {
            throw DefaultsError(
                .typeMismatch, "The stored \(stored.typeName) cannot be read as \(type.rawValue).", backend: "ConfigProvider", key: name)
        }
        return LookupResult(encodedKey: name, value: ConfigValue(content, isSecret: secretKeys.contains(name)))
    }

    static func content(_ value: DefaultsValue, as type: ConfigType) -> ConfigContent? {
        switch type {
        case .string: string(value).map(ConfigContent.string)
        case .int: int(value).map(ConfigContent.int)
        case .double: double(value).map(ConfigContent.double)
        case .bool: bool(value).map(ConfigContent.bool)
        case .bytes: bytes(value).map(ConfigContent.bytes)
        case .stringArray: array(value, string).map(ConfigContent.stringArray)
        case .intArray: array(value, int).map(ConfigContent.intArray)
        case .doubleArray: array(value, double).map(ConfigContent.doubleArray)
        case .boolArray: array(value, bool).map(ConfigContent.boolArray)
        case .byteChunkArray: array(value, bytes).map(ConfigContent.byteChunkArray)
        }
    }

    private static func string(_ value: DefaultsValue) -> String? {
        if case .string(let text) = value { return text }
        return nil
    }

    private static func int(_ value: DefaultsValue) -> Int? {
        number(value, int: { Int(exactly: $0) }, double: { Int(exactly: $0) }, text: { Int($0) })
    }

    private static func double(_ value: DefaultsValue) -> Double? {
        number(value, int: { Double(exactly: $0) }, double: { $0 }, text: { Double($0) })
    }

    /// A number of either kind, or a number's text (blanks around it ignored), converted only
    /// where that is exact.
    private static func number<Number>(
        _ value: DefaultsValue, int: (Int64) -> Number?, double: (Double) -> Number?, text: (String) -> Number?
    ) -> Number? {
        switch value {
        case .int(let number): int(number)
        case .double(let number): double(number)
        case .string(let string): text(string.trimmingCharacters(in: .whitespaces))
        default: nil
        }
    }

    private static func bool(_ value: DefaultsValue) -> Bool? {
        switch value {
        case .bool(let flag): flag
        case .int(0): false
        case .int(1): true
        case .string(let text):
            switch text.trimmingCharacters(in: .whitespaces).lowercased() {
            case "true", "yes", "1": true
            case "false", "no", "0": false
            default: nil
            }
        default: nil
        }
    }

    private static func bytes(_ value: DefaultsValue) -> [UInt8]? {
        if case .data(let data) = value { return Array(data) }
        return nil
    }

    private static func array<T>(_ value: DefaultsValue, _ element: (DefaultsValue) -> T?) -> [T]? {
        guard case .array(let items) = value else { return nil }
        var result: [T] = []
        result.reserveCapacity(items.count)
        for item in items {
            guard let converted = element(item) else { return nil }
            result.append(converted)
        }
        return result
    }
}
