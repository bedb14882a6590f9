import AnyDefaultsCore
import Synchronization

/// One copy of a store per process (per store path), shared by every instance in the process:
/// what the defects that keep data in memory treat as the truth, writing the file only partly,
/// late or not at all.
final class ProcessMirror: Sendable {
    private static let mirrors = Mutex<[String: ProcessMirror]>([:])

    struct Contents: Sendable {
        var generation: UInt64
        var values: [RawKey: DefaultsValue]
        /// A generation committed in memory but not yet written (``Defect/defersCommitToNextWrite``).
        var unwritten: [(RawKey, DefaultsValue)]?
    }

    let contents: Mutex<Contents>
    /// Held by a whole commit, so that instances of the process commit one at a time.
    let serial = Mutex(())

    private init(_ contents: Contents) { self.contents = Mutex(contents) }

    /// The process's copy of the store at `path`, loaded by `load` the first time.
    static func shared(for path: String, load: () throws(DefaultsError) -> (UInt64, [RawKey: DefaultsValue])) throws(DefaultsError) -> ProcessMirror {
        if let existing = mirrors.withLock({ $0[path] }) { return existing }
        let (generation, values) = try load()
        return mirrors.withLock { mirrors in
            if let existing = mirrors[path] { return existing }
            let created = ProcessMirror(Contents(generation: generation, values: values))
            mirrors[path] = created
            return created
        }
    }
}
