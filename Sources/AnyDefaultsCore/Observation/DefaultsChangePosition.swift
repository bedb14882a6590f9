/// Where a consumer of a store's changes stands: the ``DefaultsChangeEvent/sequence`` of the last
/// change it handled, in the numbering of one ``Defaults`` (its ``epoch``). Keep it, and resume
/// with ``Defaults/changes(after:limit:)``; as text (`"<epoch>-<sequence>"`) it fits an HTTP
/// `Last-Event-ID`.
///
/// ```swift
/// let position = defaults.position(of: event)         // "9f86d081884c7d65-42"
/// let resumed = defaults.changes(after: DefaultsChangePosition(lastEventID))
/// ```
///
/// Numbers restart in every process and every `Defaults`: the epoch, random for each, tells a
/// position from another numbering (a restarted server, another replica), which cannot be
/// resumed from.
public struct DefaultsChangePosition: Sendable, Hashable, LosslessStringConvertible {
    /// The numbering: random, one per ``Defaults`` (shared with its scoped views).
    public var epoch: UInt64
    /// The sequence number of the last change handled; `0` before the first.
    public var sequence: UInt64

    /// A position in the numbering `epoch`.
    public init(epoch: UInt64, sequence: UInt64) {
        self.epoch = epoch
        self.sequence = sequence
    }

    /// Reads the text form, `"<epoch in hexadecimal>-<sequence in decimal>"`; `nil` for other text.
    public init?(_ description: String) {
        let parts = description.split(separator: "-", omittingEmptySubsequences: false)
        guard parts.count == 2, let epoch = UInt64(parts[0], radix: 16), let sequence = UInt64(parts[1]) else { return nil }
        self.init(epoch: epoch, sequence: sequence)
    }

    public var description: String {
        String(epoch, radix: 16) + "-" + String(sequence)
    }
}
