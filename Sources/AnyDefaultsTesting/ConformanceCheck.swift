/// The stable identifier of one conformance check: what tests, reports and scripts match on.
///
/// Each raw value is `group.name` (for example `"keys.compatibilityDistinct"`) and never changes
/// meaning; new checks get new identifiers. A ``ConformanceFailure/Item`` carries the identifier of
/// the check that failed, beside a free-text detail that may change from version to version:
///
/// ```swift
/// do {
///     try suite.keys()
/// } catch let failure as ConformanceFailure {
///     let folded = failure.items.contains { $0.id == .keysCompatibilityDistinct }
/// }
/// ```
///
/// Docs/Conformance.md lists every check, what it checks and when it runs.
public enum ConformanceCheck: String, CaseIterable, Sendable, CustomStringConvertible {
    // MARK: The suite itself
    /// A provider could be opened on fresh storage.
    case suiteOpen = "suite.open"
    /// The group ran to its end: no call hung past the suite's timeout and nothing unexpected was thrown.
    case suiteCompleted = "suite.completed"
    /// The child process (see ``DefaultsConformanceSuite/ChildProcess``) started, opened the
    /// provider and answered.
    case suiteChildProcess = "suite.childProcess"

    // MARK: capabilities
    /// The provider reports exactly the capabilities the suite was told it claims.
    case capabilitiesAsClaimed = "capabilities.asClaimed"
    /// Every instance, opened on fresh or used storage, reports the same capabilities.
    case capabilitiesStable = "capabilities.stable"

    // MARK: roundTrips
    /// Each top-level edge scalar (numbers, dates, data, containers) reads back exactly at once.
    case roundTripsScalar = "roundTrips.scalar"
    /// Strings read back with the same Unicode scalars (no normalization, trimming or newline changes).
    case roundTripsString = "roundTrips.string"
    /// Edge values inside arrays and dictionaries, at several depths, read back exactly.
    case roundTripsNested = "roundTrips.nested"
    /// Dictionaries, strings and data that look like a codec's own tags read back as they were written.
    case roundTripsTagLike = "roundTrips.tagLike"
    /// Large strings, data, arrays and dictionaries (beyond 16-bit counts) read back exactly.
    case roundTripsLarge = "roundTrips.large"
    /// Every value still reads back exactly after all the others were written.
    case roundTripsAfterOthers = "roundTrips.afterOthers"
    /// `allValues()` holds exactly the written keys with exactly their values.
    case roundTripsAllValues = "roundTrips.allValues"
    /// A key overwritten with a value of every other type holds each in turn.
    case roundTripsOverwriteType = "roundTrips.overwriteType"
    /// Seeded random values (nested, with extremes) read back exactly.
    case roundTripsGenerated = "roundTrips.generated"

    // MARK: typeFidelity
    /// Values that differ only in type keep their type, on distinct keys.
    case typeFidelityDistinct = "typeFidelity.distinct"
    /// Values that differ only in type replace one another on one key.
    case typeFidelityReplace = "typeFidelity.replace"

    // MARK: keys
    /// A new store has no keys.
    case keysNewStoreEmpty = "keys.newStoreEmpty"
    /// Unusual keys (wildcards, separators, NUL, white space, scripts, 1 KiB) each hold their own value.
    case keysUnusual = "keys.unusual"
    /// `keys()` is exactly the stored set, each key once (a duplicate is named).
    case keysListExact = "keys.listExact"
    /// Canonically equivalent spellings (NFC, NFD, canonical singletons) are one key.
    case keysCanonicalSame = "keys.canonicalSame"
    /// Compatibility-equivalent keys that are not canonically equivalent (`"ﬁle"`, `"file"`) are distinct.
    case keysCompatibilityDistinct = "keys.compatibilityDistinct"
    /// Keys that differ only by case, ASCII or not, are distinct.
    case keysCaseDistinct = "keys.caseDistinct"
    /// Keys that differ only by an accent are distinct.
    case keysAccentDistinct = "keys.accentDistinct"
    /// An escaped and an unescaped spelling of each other (`"a/b"`, `"a%2Fb"`) are distinct.
    case keysEscapeDistinct = "keys.escapeDistinct"
    /// Keys that differ only by surrounding white space, or after a NUL, are distinct.
    case keysWhitespaceDistinct = "keys.whitespaceDistinct"
    /// Keys of 16 KiB and more work exactly, or are rejected with `invalidKey` and a message; never another failure.
    case keysLong = "keys.long"
    /// Seeded random keys (scripts, marks, wildcards, control characters) each hold their own value.
    case keysGenerated = "keys.generated"

    // MARK: removal
    /// A removed key reads as absent and leaves `keys()`.
    case removalRemoved = "removal.removed"
    /// Removing an absent key, or the same key twice, is no error and changes nothing.
    case removalAbsent = "removal.absent"
    /// Keys sharing a prefix with a removed key survive.
    case removalNeighbours = "removal.neighbours"
    /// Removing a key that holds SQL or glob wildcards removes only that key.
    case removalWildcards = "removal.wildcards"
    /// Removing a canonically equivalent spelling removes the key.
    case removalCanonical = "removal.canonical"
    /// `removeAll()` leaves nothing, works on an empty store, and the store works afterwards.
    case removalRemoveAll = "removal.removeAll"
    /// `allValues()` is exact after removals.
    case removalAllValuesExact = "removal.allValuesExact"
    /// `removeValueIfPresent(forKey:)` tells whether the key held a value; `removeValues(ifUnchanged:)`
    /// removes exactly the keys that hold exactly the values given and returns them in UTF-8 order.
    case removalConditional = "removal.conditional"

    // MARK: batches
    /// The changes of a batch apply in order: the last change to a key wins.
    case batchesOrder = "batches.order"
    /// An empty batch changes nothing.
    case batchesEmpty = "batches.empty"
    /// A batch with an invalid key or value anywhere is rejected with the right code.
    case batchesRejected = "batches.rejected"
    /// A rejected batch leaves no trace: no set, no removal, no new key.
    case batchesNoTrace = "batches.noTrace"
    /// Large batches of sizes that are not round numbers apply whole.
    case batchesLarge = "batches.large"
    /// A read made before a batch (or `removeAll()`) is not served stale after it.
    case batchesNoStaleRead = "batches.noStaleRead"
    /// Canonically equivalent spellings inside one batch touch one key; the last change wins.
    case batchesCanonicalKeys = "batches.canonicalKeys"
    /// `apply(_:ifUnchanged:)` applies exactly when every expected key holds exactly its value
    /// (`nil`: absent), under any spelling, and otherwise changes nothing.
    case batchesConditional = "batches.conditional"
    /// The async forms of the writes make the changes their synchronous forms make, and a
    /// rejected `applyAsync` leaves no trace.
    case batchesAsync = "batches.async"

    // MARK: errors
    /// The empty key is rejected by every operation with `invalidKey`, a message and a backend name.
    case errorsEmptyKey = "errors.emptyKey"
    /// A value nested too deeply on any branch is rejected with `invalidValue`, naming its key.
    case errorsTooDeep = "errors.tooDeep"
    /// A rejected write stores nothing and leaves the previous value.
    case errorsNothingStored = "errors.nothingStored"
    /// No error, of any code, contains any part of a stored or rejected value.
    case errorsNoValueInMessage = "errors.noValueInMessage"
    /// A value exactly at the maximum nesting depth round-trips.
    case errorsMaximumDepth = "errors.maximumDepth"
    /// The store works normally after rejected calls.
    case errorsWorksAfter = "errors.worksAfter"

    // MARK: persistence
    /// Values, batches and removals survive releasing the provider and opening the storage again.
    case persistenceReopen = "persistence.reopen"
    /// Two instances open at once read each other's writes, removals and `removeAll()`.
    case persistenceSecondInstance = "persistence.secondInstance"
    /// Two instances writing values of the same size in turn read each other's latest write.
    case persistenceSameSize = "persistence.sameSize"
    /// Two instances on the same storage report store identities that overlap (or both none), so
    /// that a copy or move of a store onto itself is refused.
    case persistenceIdentity = "persistence.identity"

    // MARK: restart
    /// A new process reads exactly what this one wrote, overwrote and removed (keys and values).
    case restartChildReads = "restart.childReads"
    /// This process, reopening after a new process wrote, overwrote, removed and cleared, reads exactly that.
    case restartParentReads = "restart.parentReads"

    // MARK: concurrency
    /// Threads writing distinct keys at once (singly and in batches) lose no update.
    case concurrencyNoLostUpdate = "concurrency.noLostUpdate"
    /// Readers of a key that writers keep replacing see only whole values, of every size up to megabytes.
    case concurrencyNoTornRead = "concurrency.noTornRead"
    /// With `.atomicBatch`, readers see a batch whole: `allValues()` never holds some of its
    /// changes without the others, and reads of its keys one after another never go back to an
    /// earlier batch.
    case concurrencyWholeBatches = "concurrency.wholeBatches"
    /// Nothing throws under concurrent use.
    case concurrencyNoError = "concurrency.noError"
    /// Threads incrementing one counter with `apply(_:ifUnchanged:)` lose no increment; of threads
    /// removing one key at once with `removeValueIfPresent(forKey:)`, exactly one is told it was there.
    case concurrencyCompareAndSet = "concurrency.compareAndSet"

    // MARK: smallStack
    /// A value at the maximum depth is written, read, listed and observed on a thread with a 512 KiB stack without crashing.
    case smallStackMaximumDepth = "smallStack.maximumDepth"

    // MARK: changeEvents
    /// One event per real change (new key, new value, other type, `-0.0` over `0.0`, removal), with the new value.
    case changeEventsChange = "changeEvents.change"
    /// Nothing for writing the stored value, removing an absent key, empty, unchanged or rejected batches.
    case changeEventsNoOp = "changeEvents.noOp"
    /// The events of a batch arrive in the batch's order.
    case changeEventsBatchOrder = "changeEvents.batchOrder"
    /// Events of this instance's own writes have origin `.local`.
    case changeEventsOrigin = "changeEvents.origin"
    /// `removeAll()` reports each stored key once, and nothing on an empty store.
    case changeEventsRemoveAll = "changeEvents.removeAll"
    /// `apply(_:ifUnchanged:)`, `removeValueIfPresent(forKey:)` and `removeValues(ifUnchanged:)`
    /// report each change they make, and nothing when they change nothing.
    case changeEventsConditional = "changeEvents.conditional"
    /// The async writes (`setValueAsync`, `applyAsync`, `removeValueAsync`, `removeAllAsync`)
    /// report each change they make, as their synchronous forms do.
    case changeEventsAsync = "changeEvents.async"
    /// Nothing arrives after `cancel()`.
    case changeEventsCancel = "changeEvents.cancel"
    /// Several observers each receive every event.
    case changeEventsObservers = "changeEvents.observers"
    /// Cancelling one observation leaves the others.
    case changeEventsCancelOne = "changeEvents.cancelOne"
    /// A released (not cancelled) observation stops.
    case changeEventsReleased = "changeEvents.released"
    /// Handlers run after the provider released its locks: another thread can use the provider meanwhile.
    case changeEventsOutsideLock = "changeEvents.outsideLock"
    /// A handler may read, write and cancel from inside, without deadlock, and sees the committed value.
    case changeEventsReentrant = "changeEvents.reentrant"
    /// Under concurrent writers each key's events arrive in commit order, one per write, the last one the final value, and a
    /// handler is called one event at a time.
    case changeEventsConcurrentOrder = "changeEvents.concurrentOrder"

    // MARK: externalChanges
    /// Writes, overwrites, removals, batches and `removeAll()` made elsewhere are reported with their new values.
    case externalChangesReported = "externalChanges.reported"
    /// Events of changes made elsewhere have origin `.external`.
    case externalChangesOrigin = "externalChanges.origin"
    /// Nothing is reported for keys an external write did not change.
    case externalChangesUnchangedSilent = "externalChanges.unchangedSilent"
    /// Every observer receives every change made elsewhere; a cancelled one receives nothing more.
    case externalChangesObservers = "externalChanges.observers"

    // MARK: multiProcess
    /// Processes writing distinct keys at once lose no update.
    case multiProcessNoLostUpdate = "multiProcess.noLostUpdate"
    /// An instance open the whole time reads what other processes wrote, with the same size or not.
    case multiProcessOpenInstanceSees = "multiProcess.openInstanceSees"
    /// After ``AnyDefaultsCore/DefaultsProvider/synchronize()``, an instance open the whole time reads
    /// what other processes committed before the call at once, without waiting.
    case multiProcessSynchronizeSees = "multiProcess.synchronizeSees"
    /// Processes incrementing one counter with `apply(_:ifUnchanged:)` lose no increment; of
    /// processes removing the same keys with `removeValueIfPresent(forKey:)`, exactly one is told
    /// each key was there.
    case multiProcessCompareAndSet = "multiProcess.compareAndSet"

    // MARK: crashAtomicity
    /// A process killed (SIGKILL) in the middle of large batches leaves each batch all or nothing.
    case crashAtomicityAllOrNothing = "crashAtomicity.allOrNothing"
    /// Batches acknowledged before the kill are kept.
    case crashAtomicityAcknowledged = "crashAtomicity.acknowledged"
    /// The store opens and reads after every kill.
    case crashAtomicityOpens = "crashAtomicity.opens"

    // MARK: model
    /// Random sequences of operations give the same results as a reference model after every step.
    case modelMatchesReference = "model.matchesReference"

    // MARK: prefixQueries
    /// `keys(withPrefix:)` lists exactly the stored keys under each prefix, sorted by UTF-8 bytes.
    case prefixQueriesKeys = "prefixQueries.keys"
    /// `allValues(withPrefix:)` holds exactly the keys under each prefix with their values.
    case prefixQueriesValues = "prefixQueries.values"

    public var description: String { rawValue }

    /// The group this check belongs to, or `nil` for the suite's own checks, which any group may report.
    public var group: DefaultsConformanceSuite.Group? {
        let name = rawValue.prefix { $0 != "." }
        return DefaultsConformanceSuite.Group(rawValue: String(name))
    }

    /// Every check of `group`.
    public static func checks(in group: DefaultsConformanceSuite.Group) -> [ConformanceCheck] {
        allCases.filter { $0.group == group }
    }
}
