import AnyDefaultsCore

/// The local copy of one namespace, which serves every read: the values, the revision up to
/// which they are complete, and this process's commits that are not folded in yet.
///
/// It is a plain value: ``PostgreSQLNamespace`` keeps it behind its lock and feeds it what the
/// server returns. Each change it makes comes back as an event naming the instance that wrote
/// it, if it was written in this process (`writer`), so that the instance's observers hear
/// `.local` and the others `.external`.
struct PostgreSQLReplica {
    typealias Writer = ObjectIdentifier

    struct Event {
        var key: String
        var value: DefaultsValue?
        var writer: Writer?
    }

    /// A commit of this process whose revision came after a gap: others committed in between,
    /// and they must be read first to keep events in commit order.
    struct PendingCommit {
        var writer: Writer
        var changes: [DefaultsChange]
    }

    private(set) var values: [String: DefaultsValue] = [:]
    /// Keys whose stored bytes could not be decoded (edited by hand, or written by a newer
    /// library): reading them reports the damage.
    private(set) var damaged: [String: DefaultsError] = [:]
    /// Every commit up to this revision is in ``values``; -1 until the first load.
    private(set) var known: Int64 = -1
    private(set) var pending: [Int64: PendingCommit] = [:]

    var isLoaded: Bool { known >= 0 }

    /// Whether the rows after ``known`` can bring the copy up to date; if not (change log entries
    /// or removal markers it missed were pruned, or the server's data went back in time), it must
    /// be reloaded whole.
    func canCatchUp(with delta: PostgreSQLStatements.Delta) -> Bool {
        isLoaded && delta.floor <= known && delta.revision >= known
    }

    /// Folds in a commit of this process. If it directly follows what is known, it is applied
    /// and its events returned; otherwise it waits in ``pending`` for the rows in between, and
    /// `nil` is returned.
    mutating func commit(revision: Int64, writer: Writer, changes: [DefaultsChange]) -> [Event]? {
        if revision <= known { return [] }   // a catch-up already brought it in
        guard revision == known + 1 else {
            pending[revision] = PendingCommit(writer: writer, changes: changes)
            return nil
        }
        known = revision
        return changes.compactMap { set($0.key, $0.value, writer: writer) }
    }

    /// Applies the rows written after ``known`` (``canCatchUp(with:)`` must hold).
    mutating func apply(_ delta: PostgreSQLStatements.Delta) -> [Event] {
        let events = replay(delta)
        advance(to: delta.revision)
        return events
    }

    /// Replaces everything with a full load (removal markers left out), reporting each key that
    /// differs.
    mutating func reload(_ delta: PostgreSQLStatements.Delta) -> [Event] {
        var events = replay(delta)
        let present = Set(delta.rows.compactMap { String(validating: $0.key, as: UTF8.self) })
        for key in values.keys.sorted() where !present.contains(key) {
            if let event = set(key, nil, writer: nil) { events.append(event) }
        }
        damaged = damaged.filter { present.contains($0.key) }
        known = -1
        advance(to: delta.revision)
        return events
    }

    /// Stores the rows of `delta` in revision order, with this process's pending commits that it
    /// covers among them: each of those reports its own changes. The rows hold each key once, at
    /// its last revision, so the rows alone would fold an earlier commit of ours into a later
    /// one, and its writer would never hear of it.
    private mutating func replay(_ delta: PostgreSQLStatements.Delta) -> [Event] {
        var events: [Event] = []
        let covered = pending.keys.filter { $0 <= delta.revision }.sorted()
        var next = covered.startIndex
        func replayCommits(before revision: Int64, _ replica: inout PostgreSQLReplica) {
            while next < covered.endIndex, covered[next] < revision {
                if let commit = replica.pending[covered[next]] {
                    events += commit.changes.compactMap { replica.set($0.key, $0.value, writer: commit.writer) }
                }
                next += 1
            }
        }
        for row in delta.rows {   // in revision order, as the catch-up reads them
            guard let key = String(validating: row.key, as: UTF8.self) else { continue }
            // A row of one of our commits comes after that commit's changes (equal, so silent).
            replayCommits(before: row.revision + 1, &self)
            if let event = store(key, bytes: row.value, writer: pending[row.revision]?.writer) { events.append(event) }
        }
        replayCommits(before: .max, &self)
        return events
    }

    /// Applies this process's pending commits as they are, in revision order, without moving
    /// ``known``: when the rows in between cannot be read now (the connection dropped), the
    /// writers' own changes still show at once; the next catch-up fills in the rest.
    mutating func applyPending() -> [Event] {
        var events: [Event] = []
        for revision in pending.keys.sorted() {
            guard let commit = pending[revision] else { continue }
            events += commit.changes.compactMap { set($0.key, $0.value, writer: commit.writer) }
        }
        pending = [:]
        return events
    }

    private mutating func advance(to revision: Int64) {
        known = max(known, revision)
        pending = pending.filter { $0.key > known }
    }

    /// Stores the bytes of a row (`nil`: removed), or notes the damage if they do not decode.
    private mutating func store(_ key: String, bytes: [UInt8]?, writer: Writer?) -> Event? {
        guard let bytes else { return set(key, nil, writer: writer) }
        let decoded = bytes.withUnsafeBytes { buffer in
            Result { () throws(BinaryCodecError) in try BinaryValueCodec.decode(buffer) }
        }
        switch decoded {
        case .success(let value):
            return set(key, value, writer: writer)
        case .failure(let error):
            damaged[key] = .postgres(
                .corrupted, "The stored value cannot be read: \(error.description).", key: key, cause: error)
            values.removeValue(forKey: key)
            return nil
        }
    }

    private mutating func set(_ key: String, _ value: DefaultsValue?, writer: Writer?) -> Event? {
        damaged.removeValue(forKey: key)
        guard values[key] != value else { return nil }
        values[key] = value
        return Event(key: key, value: value, writer: writer)
    }
}
