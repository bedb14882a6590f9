import AnyDefaultsTesting

/// One realistic way a provider breaks the contract, as ``BrokenFileProvider`` reproduces it, with
/// the check of the conformance suite that must catch it. `.none` keeps the contract.
public enum Defect: String, CaseIterable, Sendable {
    case none

    // Values
    case dropsDateType                  // a date is stored as its double
    case storesBoolsAsIntegers          // true and false stored as 1 and 0
    case losesDoublePrecision           // doubles pass through Float
    case nestedNegativeZeroCollapsed    // -0.0 becomes 0.0 inside arrays and dictionaries
    case nestedDoublesFifteenDigits     // nested doubles printed with 15 significant digits
    case nestedIntegersThroughDouble    // nested Int64 pass through Double
    case nestedDatesMilliseconds        // nested dates rounded to milliseconds
    case normalizesStringValues         // string values stored in NFC
    case trimsStringValues              // string values trimmed of white space
    case normalizesNewlines             // CRLF and CR stored as LF
    case dropsByteOrderMark             // a leading U+FEFF is dropped
    case readsDateTagAsDate             // {"$date": number} reads back as a date
    case readsUIDDictionaryAsInteger    // {"CF$UID": n} reads back as n
    case decodesDataThatLooksEncoded    // data holding a valid encoding reads back as the value it encodes
    case truncatesLargeArrays           // arrays keep count % 65536 items (a 16-bit count)
    case truncatesLargeStrings          // strings cut at 128 KiB

    // Keys
    case foldsCompatibilityKeys         // keys stored in NFKC ("ﬁ" = "fi")
    case foldsNonASCIICase              // non-ASCII keys lowercased
    case stripsAccentsFromKeys          // diacritic-insensitive keys
    case percentDecodesKeys             // "a%2Fb" stored as "a/b"
    case trimsKeys                      // keys trimmed of white space
    case cutsKeysAtNUL                  // a key ends at its first NUL, as in C
    case truncatesLongKeys              // keys cut at 4 KiB
    case rejectsLongKeysWithIOFailure   // keys over 8 KiB fail with ioFailure
    case ignoresCanonicalEquivalence    // keys stored and compared as given, not NFC
    case listsOverwrittenKeysTwice      // keys() is an append-only index
    case keysMissOne                    // keys() leaves one key out

    // Removal
    case removesByPattern               // removal treats % and _ as LIKE wildcards
    case removesByPrefix                // removing "a" removes "a.b" and "ab" too
    case allValuesStaleAfterRemoval     // allValues() from a snapshot that removals do not refresh
    case removeAbsentThrows             // removing an absent key is an error
    case removeAllKeepsNonASCIIKeys     // removeAll() skips keys that are not ASCII
    case removesRegardlessOfValue       // removeValues(ifUnchanged:) removes every key present

    // Batches
    case validatesBatchLazily           // a batch applies change by change until a bad one
    case dropsBatchRemainder            // batches applied in chunks of 1000, the last partial chunk lost
    case appliesRemovalsFirst           // a batch's removals applied before its sets
    case batchesSkipReadCache           // a read cache that batches do not update
    case readCacheKeyedBySpelling       // a read cache keyed by the key as spelled
    case comparesNumbersByValue         // apply(_:ifUnchanged:) takes 1 for 1.0 and 0.0 for -0.0
    case applyAsyncDropsRemovals        // applyAsync applies the sets of a batch, not its removals
    case conditionalWritesReportNothing // compare-and-set and compare-and-remove send no events

    // Errors
    case errorShowsValuePrefix          // an invalidValue error quotes the start of the value
    case errorCauseShowsValueSuffix     // an invalidKey error's cause quotes the end of the value
    case checksDepthOfFirstBranchOnly   // only the first child of each container is measured
    case tooDeepIsIOFailure             // a too-deep value fails with ioFailure
    case rejectsMaximumDepth            // depth 512 rejected (off by one)
    case acceptsEmptyKey                // "" is stored as a key

    // Persistence and restarts
    case forgetsOnReopen                // a new instance starts empty
    case keepsDataForProcessLifetime    // data kept in a process-wide cache, never written
    case removalsOnlyInMemory           // removals and removeAll() never reach the file
    case reloadsOnlyWhenSizeChanges     // another instance's write of the same size is not seen
    case keepsLargeValuesInMemory       // values over 1 MiB never reach the file
    case writesBackPrivateCopy          // each instance writes its own copy back, never reloading
    case dropsWritesAfterRemoveAllOnReopen  // reopening after removeAll() drops what was written since
    case identityPerInstance            // each instance names a store identity of its own

    // Processes and crashes
    case privateCopyPerProcess          // one copy per process, written whole, never merged
    case noLockBetweenProcesses         // read-modify-write with only an in-process lock
    case neverReloadsOpenInstance       // an open instance never reads what others wrote
    case synchronizeDoesNothing         // a copy read again at most every 300 ms; synchronize() does nothing
    case compareAndSetNotAtomic         // apply(_:ifUnchanged:) reads, then writes, without a lock between
    case commitsBatchChangeByChange     // each change of a batch is its own durable commit
    case rewritesFileInPlace            // the file is truncated and rewritten in place
    case defersCommitToNextWrite        // a write is made durable only by the next one

    // External changes
    case detectsNoExternalChanges       // claims externalChanges, never watches
    case marksExternalEventsLocal       // external events have origin .local
    case reportsEveryKeyOnExternalChange  // any external change reports every key
    case reportsNoExternalRemovals      // external removals are not reported
    case reportsOwnWritesAsExternalToo  // its own writes come back as external events

    // Events
    case noChangeEvents                 // never reports a change
    case eventsForNoOps                 // reports writes that change nothing
    case sortsBatchEvents               // a batch's events sorted by key
    case oneObserverOnly                // a new observer replaces the previous one
    case cancelStopsEveryObserver       // cancel() removes every handler
    case keepsReleasedObservations      // a released observation keeps receiving
    case callsHandlersUnderLock         // handlers run while the provider holds its lock
    case deliversOnWriterThreads        // each writer delivers its own events, unordered
    case dropsWritesFromHandlers        // a write made inside a handler is ignored
    case removeAllReportsNothing        // removeAll() reports no event

    // Threads and stack
    case losesConcurrentUpdates         // read-modify-write without the in-process lock
    case tearsLargeValues               // large strings written in two steps
    case busyUnderContention            // a contended lock fails with busy instead of waiting
    case recursesDeeplyOnSmallStacks    // encodes with a large frame per nesting level
    case rebuildsKeyIndexInTwoSteps     // keys() reads an index each write empties, then refills

    // Prefix queries
    case prefixByGraphemes              // prefix queries by Swift's hasPrefix: "x" misses "x\u{301}"

    // Capabilities
    case misreportsCapabilities         // reports [.persistent] while claiming more
    case capabilitiesChangeOnReopen     // a second instance reports fewer capabilities

    // Found by helper-b (new kinds; see each comment)
    case comparesNestedNumbersByValue   // compare-and-set compares containers as jsonb does: [1] = [1.0], [-0.0] = [0.0]
    case comparesStringsCanonically     // compare-and-set compares strings with Swift's == (NFD expected matches NFC stored)
    case compareAndSetNaNNeverMatches   // compare-and-set compares doubles with IEEE == (and the sign of zero): NaN never matches
    case prefixIgnoresASCIICase         // prefix queries by SQLite LIKE with escaped wildcards: ASCII case-insensitive
    case prefixValuesCachedUntilKeysChange  // allValues(withPrefix:) cached per prefix until the key set changes: overwrites unseen
    case publishesBatchKeyByKey         // a batch is committed whole, but shown to readers of the instance key by key
    case asyncWritesReportNothing       // the async writes bypass the broadcaster: no events
    case asyncSkipsCanonicalKeys        // setValueAsync and removeValueAsync store the key as spelled, not in NFC
    case removeValueIfPresentBySpelling // removeValueIfPresent matches the key as spelled, not canonically
    case readsSwallowExternalEvents     // a read that reloads the store adopts other writers' changes without reporting them
    case dropsEventsOfLargeBatches      // only the first 64 events of one commit are delivered (a notification payload limit)
    case noOpCheckMergesEquivalentStrings   // a write is skipped as a no-op when the stored container equals it under String ==
    case batchErrorNamesFirstKey        // a rejected batch's invalidValue error names the batch's first key
    case removeIfPresentAtomicOnlyInProcess // removeValueIfPresent and removeValues(ifUnchanged:) atomic under an in-process lock only
    case externalEventsToFirstObserverOnly  // the watcher reports external changes to the first observer only
    case conditionalBatchCommittedChangeByChange  // apply(_:ifUnchanged:) commits its batch change by change (apply(_:) is atomic)
    case longKeyLookupsFailWithIOFailure  // keys over 8 KiB: a set is rejected with invalidKey, a read or removal fails with ioFailure
    case removeAllOnlyKnownKeys         // removeAll() removes the keys the instance knew before it, not those others wrote since
}

extension Defect {
    /// The group that catches the defect.
    public var group: DefaultsConformanceSuite.Group {
        caught.first?.group ?? .capabilities
    }

    /// The checks that catch it, the one named for the defect first. A defect whose effect the
    /// suite can see in two ways (a store torn by a kill may not open at all) lists both.
    public var caught: [ConformanceCheck] {
        switch self {
        case .none: []
        case .dropsDateType, .losesDoublePrecision: [.roundTripsScalar]
        case .storesBoolsAsIntegers: [.typeFidelityDistinct]
        case .nestedNegativeZeroCollapsed, .nestedDoublesFifteenDigits, .nestedIntegersThroughDouble, .nestedDatesMilliseconds: [.roundTripsNested]
        case .normalizesStringValues, .trimsStringValues, .normalizesNewlines, .dropsByteOrderMark: [.roundTripsString]
        case .readsDateTagAsDate, .readsUIDDictionaryAsInteger, .decodesDataThatLooksEncoded: [.roundTripsTagLike]
        case .truncatesLargeArrays, .truncatesLargeStrings: [.roundTripsLarge]
        case .foldsCompatibilityKeys: [.keysCompatibilityDistinct]
        case .foldsNonASCIICase: [.keysCaseDistinct]
        case .stripsAccentsFromKeys: [.keysAccentDistinct]
        case .percentDecodesKeys: [.keysEscapeDistinct]
        case .trimsKeys, .cutsKeysAtNUL: [.keysWhitespaceDistinct]
        case .truncatesLongKeys, .rejectsLongKeysWithIOFailure: [.keysLong]
        case .ignoresCanonicalEquivalence: [.keysCanonicalSame]
        case .listsOverwrittenKeysTwice, .keysMissOne: [.keysListExact]
        case .removesByPattern: [.removalWildcards]
        case .removesByPrefix: [.removalNeighbours]
        case .allValuesStaleAfterRemoval: [.removalAllValuesExact]
        case .removeAbsentThrows: [.removalAbsent]
        case .removeAllKeepsNonASCIIKeys: [.removalRemoveAll]
        case .validatesBatchLazily: [.batchesNoTrace]
        case .dropsBatchRemainder: [.batchesLarge]
        case .appliesRemovalsFirst: [.batchesOrder]
        case .batchesSkipReadCache, .readCacheKeyedBySpelling: [.batchesNoStaleRead]
        case .errorShowsValuePrefix, .errorCauseShowsValueSuffix: [.errorsNoValueInMessage]
        case .checksDepthOfFirstBranchOnly, .tooDeepIsIOFailure: [.errorsTooDeep]
        case .rejectsMaximumDepth: [.errorsMaximumDepth]
        case .acceptsEmptyKey: [.errorsEmptyKey]
        case .forgetsOnReopen: [.persistenceReopen]
        case .identityPerInstance: [.persistenceIdentity]
        case .keepsDataForProcessLifetime, .removalsOnlyInMemory, .keepsLargeValuesInMemory: [.restartChildReads]
        case .reloadsOnlyWhenSizeChanges: [.persistenceSameSize]
        case .writesBackPrivateCopy: [.persistenceSecondInstance]
        case .dropsWritesAfterRemoveAllOnReopen: [.modelMatchesReference]
        case .privateCopyPerProcess, .noLockBetweenProcesses: [.multiProcessNoLostUpdate]
        case .neverReloadsOpenInstance: [.multiProcessOpenInstanceSees]
        case .synchronizeDoesNothing: [.multiProcessSynchronizeSees]
        case .compareAndSetNotAtomic: [.multiProcessCompareAndSet, .concurrencyCompareAndSet]
        case .removesRegardlessOfValue: [.removalConditional]
        case .comparesNumbersByValue: [.batchesConditional]
        case .applyAsyncDropsRemovals: [.batchesAsync]
        case .conditionalWritesReportNothing: [.changeEventsConditional]
        case .commitsBatchChangeByChange: [.crashAtomicityAllOrNothing]
        case .rewritesFileInPlace: [.crashAtomicityAllOrNothing, .crashAtomicityOpens]
        case .defersCommitToNextWrite: [.crashAtomicityAcknowledged]
        case .detectsNoExternalChanges, .reportsNoExternalRemovals: [.externalChangesReported]
        case .marksExternalEventsLocal: [.externalChangesOrigin]
        case .reportsEveryKeyOnExternalChange, .reportsOwnWritesAsExternalToo: [.externalChangesUnchangedSilent]
        case .noChangeEvents: [.changeEventsChange]
        case .eventsForNoOps: [.changeEventsNoOp]
        case .sortsBatchEvents: [.changeEventsBatchOrder]
        case .oneObserverOnly: [.changeEventsObservers]
        case .cancelStopsEveryObserver: [.changeEventsCancelOne]
        case .keepsReleasedObservations: [.changeEventsReleased]
        case .callsHandlersUnderLock: [.changeEventsOutsideLock]
        case .deliversOnWriterThreads: [.changeEventsConcurrentOrder]
        case .dropsWritesFromHandlers: [.changeEventsReentrant]
        case .removeAllReportsNothing: [.changeEventsRemoveAll]
        case .losesConcurrentUpdates: [.concurrencyNoLostUpdate]
        case .tearsLargeValues, .rebuildsKeyIndexInTwoSteps: [.concurrencyNoTornRead]
        case .busyUnderContention: [.concurrencyNoError]
        case .recursesDeeplyOnSmallStacks: [.smallStackMaximumDepth]
        case .prefixByGraphemes: [.prefixQueriesKeys, .prefixQueriesValues]
        case .misreportsCapabilities: [.capabilitiesAsClaimed]
        case .capabilitiesChangeOnReopen: [.capabilitiesStable]
        case .comparesNestedNumbersByValue, .comparesStringsCanonically: [.batchesConditional]
        case .compareAndSetNaNNeverMatches: [.batchesConditional, .removalConditional]
        case .prefixIgnoresASCIICase: [.prefixQueriesKeys, .prefixQueriesValues]
        case .prefixValuesCachedUntilKeysChange: [.prefixQueriesValues]
        case .publishesBatchKeyByKey: [.concurrencyWholeBatches]
        case .asyncWritesReportNothing: [.changeEventsAsync]
        case .asyncSkipsCanonicalKeys: [.batchesAsync]
        case .removeValueIfPresentBySpelling: [.removalConditional]
        case .readsSwallowExternalEvents: [.externalChangesReported]
        case .externalEventsToFirstObserverOnly: [.externalChangesObservers]
        case .dropsEventsOfLargeBatches: [.changeEventsBatchOrder, .changeEventsRemoveAll]
        case .noOpCheckMergesEquivalentStrings: [.changeEventsChange]
        case .batchErrorNamesFirstKey: [.batchesRejected]
        case .removeIfPresentAtomicOnlyInProcess: [.multiProcessCompareAndSet]
        case .conditionalBatchCommittedChangeByChange: [.crashAtomicityAllOrNothing]
        case .longKeyLookupsFailWithIOFailure: [.keysLong]
        case .removeAllOnlyKnownKeys: [.externalChangesReported]
        }
    }

    /// Whether the defect shows only by chance (a race, a kill's timing), so that its test runs
    /// it several times.
    public var isProbabilistic: Bool {
        switch self {
        case .losesConcurrentUpdates, .tearsLargeValues, .busyUnderContention, .deliversOnWriterThreads, .noLockBetweenProcesses,
            .commitsBatchChangeByChange, .rewritesFileInPlace, .defersCommitToNextWrite, .rebuildsKeyIndexInTwoSteps,
            .compareAndSetNotAtomic, .publishesBatchKeyByKey, .removeIfPresentAtomicOnlyInProcess, .conditionalBatchCommittedChangeByChange:
            true
        default: false
        }
    }

    /// Whether the suite is told the capabilities (otherwise it reads them from the provider).
    public var suiteClaimsCapabilities: Bool { self != .capabilitiesChangeOnReopen }
}
