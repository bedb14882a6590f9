import AnyDefaultsCore

extension DefaultsConformanceSuite {
    /// Capabilities: the provider reports exactly what the suite was told it claims (every group
    /// checks this too, on every instance it opens), the same on fresh and on used storage.
    func capabilityChecks() throws -> ConformanceReport {
        try groupOnStorage(.capabilities) { checker, storage in
            if claimed != nil, let error = reportedCapabilities().error {
                checker.fail(.suiteOpen, "open a provider to read its capabilities", expected: "a provider", actual: error)
            }
            guard let first = reopen(storage, checker, "open the provider") else { return }
            checker.attempt(.capabilitiesStable, "write", key: "cap.a") { try first.setValue(.int(1), forKey: "cap.a") }
            guard let second = reopen(storage, checker, "open a second instance on used storage") else { return }
            checker.check(
                .capabilitiesStable, second.capabilities == first.capabilities, "two instances report the same capabilities",
                expected: "\(first.capabilities)", actual: "\(second.capabilities)")
        }
    }

    // MARK: One method per group

    /// The `capabilities` group: the provider reports what it claims. See ``Group``.
    @discardableResult public func checkCapabilities() throws -> ConformanceReport { try run(.capabilities) }
    /// The `roundTrips` group: every edge value reads back exactly.
    @discardableResult public func roundTrips() throws -> ConformanceReport { try run(.roundTrips) }
    /// The `typeFidelity` group: values differing only in type stay apart.
    @discardableResult public func typeFidelity() throws -> ConformanceReport { try run(.typeFidelity) }
    /// The `keys` group: which keys are the same and which are different.
    @discardableResult public func keys() throws -> ConformanceReport { try run(.keys) }
    /// The `removal` group: removals remove exactly what they name.
    @discardableResult public func removal() throws -> ConformanceReport { try run(.removal) }
    /// The `batches` group: order, rejection without a trace, size, no stale reads.
    @discardableResult public func batches() throws -> ConformanceReport { try run(.batches) }
    /// The `errors` group: codes, depth on every branch, no value in any error.
    @discardableResult public func errors() throws -> ConformanceReport { try run(.errors) }
    /// The `persistence` group: reopening and second instances in this process.
    @discardableResult public func persistence() throws -> ConformanceReport { try run(.persistence) }
    /// The `restart` group: persistence across a new process.
    @discardableResult public func restart() throws -> ConformanceReport { try run(.restart) }
    /// The `concurrency` group: no lost update, no torn read.
    @discardableResult public func concurrency() throws -> ConformanceReport { try run(.concurrency) }
    /// The `smallStack` group: the deepest value on a 512 KiB stack.
    @discardableResult public func smallStack() throws -> ConformanceReport { try run(.smallStack) }
    /// The `changeEvents` group: what is reported, in which order, from where.
    @discardableResult public func changeEvents() throws -> ConformanceReport { try run(.changeEvents) }
    /// The `externalChanges` group: changes made elsewhere are reported.
    @discardableResult public func externalChanges() throws -> ConformanceReport { try run(.externalChanges) }
    /// The `multiProcess` group: several processes lose no update.
    @discardableResult public func multiProcess() throws -> ConformanceReport { try run(.multiProcess) }
    /// The `crashAtomicity` group: batches are all or nothing when a process is killed.
    @discardableResult public func crashAtomicity() throws -> ConformanceReport { try run(.crashAtomicity) }
    /// The `model` group: random operations against a reference model.
    @discardableResult public func model() throws -> ConformanceReport { try run(.model) }
    /// The `prefixQueries` group: `keys(withPrefix:)` and `allValues(withPrefix:)` are exact.
    @discardableResult public func prefixQueries() throws -> ConformanceReport { try run(.prefixQueries) }
}
