@testable import AnyDefaultsPostgreSQL
import AnyDefaults
import Testing
import TestSupport

/// The replica against a model of the server, with no server: commits of this process and of
/// other clients in a seeded random order, the answers to this process's writes arriving late,
/// catch-ups read at one moment and applied later (after the answers sent before them, as the
/// namespace orders them). Every value written is new, so each event names the commit it came
/// from.
@Suite(.ownThreads) struct PostgreSQLReplicaTests {
    @Test(arguments: 0..<8)
    func everyOwnCommitReportsItsChangesInCommitOrderAndTheReplicaEndsLikeTheServer(_ run: Int) {
        let seed = UInt64.random(in: 1...UInt64(UInt32.max))
        var random = SeededGenerator(seed: seed)
        var server = ServerModel()
        var replica = PostgreSQLReplica()
        var events = replica.reload(server.delta(after: 0, full: true))
        let ours = ObjectIdentifier(Writer.shared)
        // Answers to our writes not yet handled, in the order sent; catch-ups read and waiting for
        // the answers sent before them.
        var answers: [(revision: Int64, changes: [DefaultsChange])] = []
        var catchUps: [(delta: PostgreSQLStatements.Delta, waitsFor: Int)] = []
        var ownCommits: [(revision: Int64, changes: [DefaultsChange])] = []
        var handled = 0
        let keys = ["a", "b", "c"]
        func handleAnswer() {
            let answer = answers.removeFirst()
            handled += 1
            events += replica.commit(revision: answer.revision, writer: ours, changes: answer.changes) ?? []
        }
        func applyCatchUp(_ delta: PostgreSQLStatements.Delta) {
            if replica.canCatchUp(with: delta) {
                events += replica.apply(delta)
            } else {
                // As the namespace does: read everything again, after the answers sent before.
                while !answers.isEmpty { handleAnswer() }
                events += replica.reload(server.delta(after: 0, full: true))
            }
        }
        for _ in 0..<400 {
            switch Int.random(in: 0..<10, using: &random) {
            case 0..<4:
                let changes = server.changes(of: keys, using: &random)
                let revision = server.commit(changes, ours: true)
                answers.append((revision, changes))
                ownCommits.append((revision, changes))
            case 4..<6:
                server.commit(server.changes(of: keys, using: &random))
            case 6..<8:
                if !answers.isEmpty { handleAnswer() }
            default:
                if catchUps.isEmpty || Bool.random(using: &random) {
                    catchUps.append((server.delta(after: replica.known, full: false), handled + answers.count))
                }
                if let first = catchUps.first, first.waitsFor <= handled {
                    catchUps.removeFirst()
                    applyCatchUp(first.delta)
                }
            }
        }
        while !answers.isEmpty { handleAnswer() }
        for catchUp in catchUps { applyCatchUp(catchUp.delta) }
        applyCatchUp(server.delta(after: replica.known, full: false))

        #expect(replica.values == server.values, "seed \(seed): the replica holds what the server holds")
        #expect(replica.known == server.revision, "seed \(seed)")
        #expect(replica.pending.isEmpty, "seed \(seed)")
        // Each value we wrote reported once, as ours, in the order of our commits. (A removal of
        // ours reports nothing where the key was already absent from what this process saw: a
        // catch-up reads each key once, so another client's value in between may go unseen.)
        let expected = ownCommits.flatMap { commit in commit.changes.compactMap { $0.value.map { value in "\(commit.revision) \(value)" } } }
        let reported = events.filter { $0.writer == ours && $0.value != nil }.compactMap { event in
            server.revision(of: event.value).map { "\($0) \(event.value.map { "\($0)" } ?? "")" }
        }
        #expect(reported == expected, "seed \(seed): our changes, as their events reported them")
        // Nothing of another client's reported as ours, and each key's events in commit order.
        #expect(events.allSatisfy { event in (event.writer == ours) == server.isOurs(event.value) || event.value == nil }, "seed \(seed)")
        for key in keys {
            let revisions = events.filter { $0.key == key }.compactMap { server.revision(of: $0.value) }
            #expect(revisions == revisions.sorted(), "seed \(seed): events of \(key) in commit order")
        }
    }

    /// Stands for the instance that writes (the replica knows writers by identity only).
    private final class Writer: Sendable {
        static let shared = Writer()
    }

    /// The server's rows: each key once, at the revision that last wrote it.
    private struct ServerModel {
        var revision: Int64 = 0
        var rows: [String: (value: DefaultsValue?, revision: Int64)] = [:]
        var nextValue: Int64 = 0
        /// The revision each value was written at, and whether by us (values are never reused).
        var written: [Int64: (revision: Int64, ours: Bool)] = [:]

        var values: [String: DefaultsValue] { rows.compactMapValues(\.value) }

        /// One or two keys, each set to a new value or removed.
        mutating func changes(of keys: [String], using random: inout SeededGenerator) -> [DefaultsChange] {
            keys.shuffled(using: &random).prefix(Int.random(in: 1...2, using: &random)).map { key in
                guard Int.random(in: 0..<5, using: &random) > 0 else { return .remove(key) }
                nextValue += 1
                return .set(key, .int(nextValue))
            }
        }

        @discardableResult
        mutating func commit(_ changes: [DefaultsChange], ours: Bool = false) -> Int64 {
            revision += 1
            for change in changes {
                rows[change.key] = (change.value, revision)
                if case .int(let number)? = change.value { written[number] = (revision, ours) }
            }
            return revision
        }

        func delta(after known: Int64, full: Bool) -> PostgreSQLStatements.Delta {
            let rows = rows.filter { full ? $0.value.value != nil : $0.value.revision > known }
                .sorted { ($0.value.revision, $0.key) < ($1.value.revision, $1.key) }
                .map { key, row in
                    PostgreSQLStatements.Row(
                        key: Array(key.utf8), value: row.value.map { BinaryValueCodec.encode($0) }, revision: row.revision)
                }
            return PostgreSQLStatements.Delta(revision: revision, floor: 0, rows: rows)
        }

        func revision(of value: DefaultsValue?) -> Int64? {
            guard case .int(let number)? = value else { return nil }
            return written[number]?.revision
        }

        func isOurs(_ value: DefaultsValue?) -> Bool {
            guard case .int(let number)? = value else { return false }
            return written[number]?.ours ?? false
        }
    }
}
