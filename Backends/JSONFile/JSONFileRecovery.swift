import AnyDefaultsCore

/// A damaged settings file that ``JSONFileProvider`` moved aside under
/// ``JSONFileProvider/Options/CorruptionPolicy/moveAside``, before it started with an empty store.
///
/// ```swift
/// var options = JSONFileProvider.Options()
/// options.corruptionPolicy = .moveAside
/// options.onRecovery = { recovery in log("settings reset; old file kept at \(recovery.movedTo)") }
/// ```
public struct JSONFileRecovery: Sendable {
    /// Where the damaged file is now: `<file>.corrupted-<YYYYMMDDTHHMMSSZ>` in the same directory.
    public var movedTo: String
    /// What was wrong with it (code `corrupted`, with line and column).
    public var error: DefaultsError
}
