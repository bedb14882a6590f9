import AnyDefaults
import Testing
import TestSupport

/// The wrapper in a struct: setting does not need a `mutating` context.
struct AudioSettings {
    @Default var volume: Double
    @Default var nickname: String?
    @Default var layout: Layout
    @Default var theme: Theme

    init(store: Defaults) {
        _volume = Default(wrappedValue: 0.5, "volume", store: store)
        _nickname = Default("nickname", store: store)
        _layout = Default(.layout, store: store)
        _theme = Default(wrappedValue: .light, "theme", store: store)
    }
}

/// The wrapper in a class, migrating in its initializer as an app would at launch.
final class LegacyService {
    @Default var legacyCount: Double
    @Default var index: Int

    init(store: Defaults) {
        _legacyCount = Default(wrappedValue: 1, "count", store: store)
        _index = Default(wrappedValue: 0, "index", store: store)
        $legacyCount.migrate(to: $index) { Int($0) - 1 }
    }
}

/// The wrapper in an actor.
actor Downloads {
    @Default var limit: Int
    init(store: Defaults) { _limit = Default(wrappedValue: 3, "downloads.limit", store: store) }
    func raise() -> Int {
        limit += 1
        return limit
    }
}

@Suite struct DefaultWrapperTests {
    @Test func inAnActor() async {
        let defaults = Defaults(AnyDefaultsMemory.MemoryProvider())
        let downloads = Downloads(store: defaults)
        #expect(await downloads.raise() == 4)
        #expect(defaults.integer(forKey: "downloads.limit") == 4)
    }

    @Test(arguments: Backend.allCases) func readsWritesAndResets(backend: Backend) throws {
        let fixture = try backend.fixture()
        defer { fixture.remove() }
        let defaults = try fixture.open()
        let settings = AudioSettings(store: defaults)    // a `let`: setters are nonmutating
        #expect(settings.volume == 0.5)
        #expect(settings.nickname == nil)
        #expect(!settings.$volume.isSet)

        settings.volume = 0.8
        settings.nickname = "ada"
        settings.layout = Layout(columns: 5, sidebar: false)
        settings.theme = .dark
        #expect(settings.$volume.isSet)
        #expect(try defaults.provider.value(forKey: "volume") == .double(0.8))
        #expect(defaults[.layout] == Layout(columns: 5, sidebar: false))
        #expect(defaults.string(forKey: "theme") == "dark")

        // Another handle on the same key and store sees the same value.
        let other = AudioSettings(store: try fixture.open())
        #expect(other.volume == 0.8)
        #expect(other.nickname == "ada")

        settings.nickname = nil
        #expect(!defaults.hasValue(forKey: "nickname"))
        settings.$volume.reset()
        #expect(settings.volume == 0.5)
        #expect(!settings.$volume.isSet)
        #expect(fixture.errors.all.isEmpty)
    }

    @Test func registeredDefaultsComeBeforeTheWrappersDefault() {
        let defaults = Defaults(AnyDefaultsMemory.MemoryProvider())
        let volume = Default(wrappedValue: 0.5, "volume", store: defaults)
        defaults.register(defaults: ["volume": 0.3])
        #expect(volume.wrappedValue == 0.3)
        #expect(!volume.isSet)
    }

    @Test func isSendable() async {
        let defaults = Defaults(AnyDefaultsMemory.MemoryProvider())
        let volume = Default(wrappedValue: 0.5, "volume", store: defaults)
        await Task.detached { volume.wrappedValue = 0.9 }.value
        #expect(volume.wrappedValue == 0.9)
    }

    @Test(arguments: Backend.allCases) func valuesStartWithTheCurrentValueThenEachChange(backend: Backend) async throws {
        let fixture = try backend.fixture()
        defer { fixture.remove() }
        let defaults = try fixture.open()
        let volume = Default(wrappedValue: 0.5, "volume", store: defaults)
        volume.wrappedValue = 0.6
        settle(defaults)
        let values = volume.values

        volume.wrappedValue = 0.6        // the value already stored: no change
        defaults[.muted] = true          // another key
        volume.wrappedValue = 0.7
        volume.reset()
        defaults.set(0.9, forKey: "volume")
        #expect(try await first(4, of: values) == [0.6, 0.7, 0.5, 0.9])
    }

    @Test(arguments: Backend.allCases) func observeCallsBackWithEachNewValue(backend: Backend) throws {
        let fixture = try backend.fixture()
        defer { fixture.remove() }
        let defaults = try fixture.open()
        let theme = Default(.theme, store: defaults)
        let seen = Recorder<Theme>()
        let observation = theme.observe { seen.record($0) }
        theme.wrappedValue = .dark
        theme.wrappedValue = .dark
        theme.reset()
        settle(defaults)
        observation.cancel()
        theme.wrappedValue = .dark
        settle(defaults)
        #expect(seen.all == [.dark, .light])
    }

    // MARK: Migration

    @Test(arguments: Backend.allCases) func migrationMovesTheValueOnceAndRemovesTheSource(backend: Backend) throws {
        let fixture = try backend.fixture()
        defer { fixture.remove() }
        let defaults = try fixture.open()
        defaults.set(4.0, forKey: "count")

        let service = LegacyService(store: defaults)
        #expect(service.index == 3)
        #expect(!service.$legacyCount.isSet)
        #expect(service.legacyCount == 1)

        service.index = 10                               // the new key moves on
        let again = LegacyService(store: defaults)       // next launch: nothing to migrate
        #expect(again.index == 10)
        #expect(!again.$legacyCount.migrate(to: again.$index) { Int($0) - 1 })
    }

    @Test func migrationRunsOnlyWhenTheSourceHoldsAValue() {
        let defaults = Defaults(AnyDefaultsMemory.MemoryProvider())
        let old = Default(wrappedValue: "guest", "user.name", store: defaults)
        let new = Default(wrappedValue: "nobody", "profile.name", store: defaults)
        defaults.register(defaults: ["user.name": "registered"])   // a registered value does not count
        let transformed = Counter()
        #expect(!old.migrate(to: new) { transformed.increment(); return $0 })
        #expect(transformed.count == 0)
        #expect(!new.isSet)
    }

    @Test(arguments: Backend.allCases) func migrationToAnotherStore(backend: Backend) throws {
        let legacyFixture = try backend.fixture()
        defer { legacyFixture.remove() }
        let currentFixture = try backend.fixture()
        defer { currentFixture.remove() }
        let legacy = try legacyFixture.open()
        let current = try currentFixture.open()
        let old = Default(wrappedValue: "guest", "user.name", store: legacy)
        let new = Default(wrappedValue: "guest", "user.name", store: current)
        old.wrappedValue = "ada"

        #expect(old.migrate(to: new))
        #expect(new.wrappedValue == "ada")
        #expect(!legacy.hasValue(forKey: "user.name"))
        #expect(!old.migrate(to: new))
    }

    @Test func migrationWithinAStoreIsOneBatch() {
        let provider = CountingProvider()
        let defaults = Defaults(provider, cached: false)
        defaults.set(2, forKey: "old")
        let applied = provider.batches
        let changes = Recorder<String>()
        let observation = defaults.observe { changes.record($0.key) }
        #expect(defaults.migrate(DefaultsKey<Int>("old", default: 0), to: DefaultsKey<Int>("new", default: 0)))
        #expect(provider.batches == applied + 1)
        #expect(Set(changes.all) == ["old", "new"])
        #expect(defaults.integer(forKey: "new") == 2)
        observation.cancel()
    }

    @Test func aSourceThatCannotBeReadIsLeftInPlace() {
        let errors = ErrorLog()
        let defaults = Defaults(AnyDefaultsMemory.MemoryProvider(), errorHandler: errors.handler)
        defaults.set("not a number", forKey: "count")
        let old = Default(wrappedValue: 0, "count", store: defaults)
        let new = Default(wrappedValue: 0, "index", store: defaults)
        #expect(!old.migrate(to: new))
        #expect(defaults.string(forKey: "count") == "not a number")
        #expect(!new.isSet)
        #expect(errors.all.map(\.code) == [.typeMismatch])
        #expect(errors.all.first?.key == "count")
    }

    @Test func migratingAKeyToItselfDoesNothing() {
        let defaults = Defaults(AnyDefaultsMemory.MemoryProvider())
        let volume = Default(wrappedValue: 0.5, "volume", store: defaults)
        volume.wrappedValue = 0.7
        #expect(!volume.migrate(to: volume))
        #expect(volume.wrappedValue == 0.7)
        #expect(!defaults.scoped("a.").migrate(.volume, to: DefaultsKey<Double>("a.volume", default: 0), in: defaults))
    }

    @Test func migratingToNilRemovesTheTarget() {
        let defaults = Defaults(AnyDefaultsMemory.MemoryProvider())
        let old = Default(wrappedValue: "", "old", store: defaults)
        let new = Default<String?>("new", store: defaults)
        new.wrappedValue = "stale"
        old.wrappedValue = "drop me"
        #expect(old.migrate(to: new) { _ in nil })
        #expect(!new.isSet)
        #expect(!old.isSet)
    }
}
