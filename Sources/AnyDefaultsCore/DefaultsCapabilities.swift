/// What a provider promises beyond the basic contract. The conformance suite checks each claimed
/// capability and skips the checks of those not claimed.
///
/// ```swift
/// if store.capabilities.contains(.atomicBatch) { try store.apply(changes) }
/// ```
public struct DefaultsCapabilities: OptionSet, Sendable, Hashable {
    public let rawValue: UInt32

    public init(rawValue: UInt32) { self.rawValue = rawValue }

    /// Values survive closing the provider and opening a new one on the same location, and a
    /// second instance opened on that location reads what the first wrote.
    public static let persistent = DefaultsCapabilities(rawValue: 1 << 0)
    /// ``DefaultsProvider/apply(_:)`` is all or nothing, also when the process dies part-way.
    public static let atomicBatch = DefaultsCapabilities(rawValue: 1 << 1)
    /// Several processes may use the same storage at once without losing updates to distinct keys.
    public static let multiProcess = DefaultsCapabilities(rawValue: 1 << 2)
    /// Changes made by other processes are detected and reported as events with origin
    /// ``DefaultsChangeEvent/Origin-swift.enum/external``.
    public static let externalChanges = DefaultsCapabilities(rawValue: 1 << 3)

    /// Every capability.
    public static let all: DefaultsCapabilities = [.persistent, .atomicBatch, .multiProcess, .externalChanges]
}

extension DefaultsCapabilities: CustomStringConvertible {
    public var description: String {
        let names: [(DefaultsCapabilities, String)] = [
            (.persistent, "persistent"), (.atomicBatch, "atomicBatch"),
            (.multiProcess, "multiProcess"), (.externalChanges, "externalChanges"),
        ]
        return "[" + names.filter { contains($0.0) }.map(\.1).joined(separator: ", ") + "]"
    }
}
