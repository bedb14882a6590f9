import AnyDefaultsCombine
import AnyDefaultsMacros
import AnyDefaultsTestTraits
import Observation
import Synchronization
import Testing

// Everything that takes `Defaults.standard` when it is created, read in tests that run in
// parallel, each with the store of its own scope.

struct CasePreferences {
    @Default("case.value") var value = -1
    @Default("case.name") var name: String?
}

final class CaseModel: DefaultsModel {
    @Setting("value") var value = -1
}

@ObservableDefaults(prefix: "case.")
final class CaseMacroModel {
    var value = -1
}

final class CasePublished: ObservableObject {
    let objectWillChange = ObservableObjectPublisher()
    @PublishedDefault("case.value") var value = -1
}

extension DefaultsKeys {
    static let caseValue = DefaultsKey<Int>("case.value", default: -1)
}

@Suite struct StandardStoreIsolationTests {
    /// The report of issue 22: 40 cases that each make the standard store hold their own value,
    /// then read it through `@Default`. Without the trait they share one process-wide store and
    /// read each other's value (8 of 10 runs failed); with it each case has its own.
    @Test(.defaultsStore(.inMemory), arguments: 0..<40)
    func eachCaseReadsItsOwnValueThroughEveryKindOfProperty(_ value: Int) async throws {
        Defaults.useInMemoryStandard(["case.value": .int(Int64(value))])
        await Task.yield()                                        // let the other cases interleave
        #expect(CasePreferences().value == value)
        #expect(Default(.caseValue).wrappedValue == value)
        #expect(CaseModel(prefix: "case.").value == value)
        #expect(CaseMacroModel().value == value)
        #expect(CasePublished().value == value)
        #expect(Defaults.standard[.caseValue] == value)

        CasePreferences().value = value + 1000                   // writes go to the case's store too
        try await Task.sleep(for: .milliseconds(Int.random(in: 0...3)))
        #expect(Defaults.standard[.caseValue] == value + 1000)
    }

    /// Two tasks inside scopes of their own, in a fixed interleaving: each writes while the other
    /// is inside its scope, then reads its own value.
    @Test func twoScopesInterleavedKeepTheirOwnStores() async {
        let (firstWrote, firstWroteContinuation) = AsyncStream.makeStream(of: Void.self)
        let (secondWrote, secondWroteContinuation) = AsyncStream.makeStream(of: Void.self)
        async let first: Int = Defaults.withStandard(Defaults(MemoryProvider())) {
            CasePreferences().value = 1
            firstWroteContinuation.yield()
            for await _ in secondWrote { break }
            return CasePreferences().value
        }
        async let second: Int = Defaults.withStandard(Defaults(MemoryProvider())) {
            for await _ in firstWrote { break }
            CasePreferences().value = 2
            secondWroteContinuation.yield()
            return CasePreferences().value
        }
        #expect(await [first, second] == [1, 2])
    }

    @Test func scopesNestAndSettingTheStandardStoreChangesOnlyTheInnermost() {
        let outer = Defaults(MemoryProvider(["case.value": 1]))
        let inner = Defaults(MemoryProvider(["case.value": 2]))
        Defaults.withStandard(outer) {
            #expect(Defaults.standard === outer)
            Defaults.withStandard(inner) {
                #expect(CasePreferences().value == 2)
                Defaults.useInMemoryStandard(["case.value": 3])
                #expect(CasePreferences().value == 3)
            }
            #expect(Defaults.standard === outer)
            #expect(CasePreferences().value == 1)
        }
    }

    @Test func tasksStartedInAScopeInheritItsStore() async throws {
        let store = Defaults(MemoryProvider(["case.value": 7]))
        let values = await Defaults.withStandard(store) {
            async let child = CasePreferences().value
            let task = Task { CasePreferences().value }
            let grouped = await withTaskGroup(of: Int.self) { group in
                group.addTask { CasePreferences().value }
                return await group.next() ?? -1
            }
            return await [child, task.value, grouped]
        }
        #expect(values == [7, 7, 7])
    }

    @Test func errorsAndResultsPassThrough() async throws {
        struct Refused: Error {}
        let store = Defaults(MemoryProvider())
        #expect(throws: Refused.self) {
            try Defaults.withStandard(store) { () throws(Refused) in throw Refused() }
        }
        await #expect(throws: Refused.self) {
            try await Defaults.withStandard(store) { () async throws(Refused) in
                await Task.yield()
                throw Refused()
            }
        }
        // Typed throws reach the caller as the body's own error type.
        do {
            try Defaults.withStandard(store) { () throws(DefaultsError) in try store.throwing.set(1, forKey: "") }
            Issue.record("an empty key was accepted")
        } catch {
            #expect(error.code == .invalidKey)
        }
        #expect(Defaults.withStandard(store) { "result" } == "result")
    }

    @Test(.defaultsStore(.inMemory(["case.value": 5, "case.name": "ada"])))
    func theTraitStartsEachTestWithTheGivenValues() {
        #expect(CasePreferences().value == 5)
        #expect(CasePreferences().name == "ada")
    }

    @Test(.defaultsStore(.custom { Defaults(MemoryProvider(["case.value": 9]), cached: false) }))
    func theTraitCanMakeAnyStore() {
        #expect(!(Defaults.standard.provider is CachingProvider<MemoryProvider>))
        #expect(CasePreferences().value == 9)
    }

    @Test func changesOfTheScopedStoreReachObservers() async throws {
        try await Defaults.withStandard(Defaults(MemoryProvider())) {
            let model = CaseMacroModel()
            let changed = Mutex(false)
            withObservationTracking { _ = model.value } onChange: { changed.withLock { $0 = true } }
            Defaults.standard[.caseValue] = 3
            #expect(changed.withLock { $0 })
            var values = CasePreferences().$value.values.makeAsyncIterator()
            #expect(await values.next() == 3)
            try Defaults.standard.throwing.set(4, for: .caseValue)
            #expect(await values.next() == 4)
        }
    }
}

/// On a suite, the trait gives every test (and every case) a store of its own: the tests below
/// run in parallel and each writes the same key.
@Suite(.defaultsStore(.inMemory(["case.value": 100])))
struct SuiteWideStoreTests {
    @Test(arguments: 0..<10) func aCaseOfAParameterizedTest(_ value: Int) async throws {
        #expect(CasePreferences().value == 100)                 // nothing from the other cases
        CasePreferences().value = value
        try await Task.sleep(for: .milliseconds(Int.random(in: 0...3)))
        #expect(CasePreferences().value == value)
    }

    @Test func aPlainTest() async throws {
        #expect(CasePreferences().value == 100)
        CasePreferences().value = -5
        try await Task.sleep(for: .milliseconds(2))
        #expect(CasePreferences().value == -5)
    }

    @Suite struct Nested {
        @Test func aTestOfANestedSuite() {
            #expect(CasePreferences().value == 100)
            CasePreferences().value = 42
            #expect(CasePreferences().value == 42)
        }
    }
}
