import AnyDefaultsMacros
import Foundation
import Observation
import TestSupport
import Testing

/// `@ObservableDefaults` classes over every built-in backend: where each property lives, how it
/// is observed, and what changes made elsewhere do.
@Suite struct ObservableDefaultsTests {
    @Test(arguments: TestBackend.all)
    func everyPropertyTypeIsStoredUnderThePrefixAndReadBack(_ backend: TestBackend) throws {
        try backend.withStore { store in
            let defaults = store.defaults
            let settings = PlayerPreferences(store: defaults)
            // Nothing stored: the initial values are the defaults.
            #expect(settings.volume == 0.5)
            #expect(settings.nickname == nil)
            #expect(settings.layout == Layout(columns: 2, sidebar: true))
            #expect(defaults.keys().isEmpty)

            settings.volume = 0.8
            settings.name = "ada"
            settings.nickname = "lovelace"
            settings.theme = .dark
            settings.layout.columns += 1
            settings.tags = ["a", "b"]
            settings.scores = ["x": 1]
            settings.launches += 2
            settings.serverURL = "https://example.org"
            settings.isScrubbing = true
            settings.scratch = 9

            #expect(defaults.double(forKey: "player.volume") == 0.8)
            #expect(defaults.string(forKey: "player.name") == "ada")
            #expect(defaults.string(forKey: "player.nickname") == "lovelace")
            #expect(defaults.string(forKey: "player.theme") == "dark")
            #expect(defaults[DefaultsKey<Layout?>("player.layout")] == Layout(columns: 3, sidebar: true))
            #expect(defaults.value([String].self, forKey: "player.tags") == ["a", "b"])
            #expect(defaults.value([String: Int].self, forKey: "player.scores") == ["x": 1])
            #expect(defaults.integer(forKey: "player.launches") == 2)
            #expect(defaults.string(forKey: "player.server_url") == "https://example.org")
            // Memory-only and ignored properties are not stored.
            #expect(Set(defaults.keys()) == [
                "player.volume", "player.name", "player.nickname", "player.theme", "player.layout", "player.tags",
                "player.scores", "player.launches", "player.server_url",
            ])
            #expect(settings.isScrubbing)
            #expect(settings.scratch == 9)

            // Another model on the same store reads the same values; a new one too.
            let other = PlayerPreferences(store: defaults)
            #expect(other.layout.columns == 3 && other.theme == .dark && other.tags == ["a", "b"])
            #expect(!other.isScrubbing)

            // nil removes an optional's key.
            settings.nickname = nil
            #expect(!defaults.hasValue(forKey: "player.nickname"))
            #expect(store.errors.all.isEmpty, "\(store.errors.all)")
        }
    }

    @Test(arguments: TestBackend.all)
    func readingAPropertyTracksThatPropertyAlone(_ backend: TestBackend) async throws {
        try await backend.withStore { store in
            let defaults = store.defaults
            let settings = PlayerPreferences(store: defaults)
            let other = PlayerPreferences(store: defaults)
            let volume = track { _ = settings.volume }
            let scrubbing = track { _ = settings.isScrubbing }

            settings.name = "ada"                      // another stored property
            other.theme = .dark                        // through another model
            defaults.set(3, forKey: "volume")          // the same name without the prefix
            settings.isScrubbing = true                // a memory-only property
            settings.scratch = 1                       // an ignored property
            settle(defaults)
            #expect(volume.all.isEmpty)
            #expect(scrubbing.all.count == 1)

            other.volume = 0.9                         // the same property through another model
            #expect(await eventually { volume.all.count == 1 })
            #expect(settings.volume == 0.9)

            // A change through the store (any Defaults on it) reaches the property's observers.
            let again = track { _ = settings.volume }
            let name = track { _ = settings.name }
            defaults.set(0.1, forKey: "player.volume")
            #expect(await eventually { again.all.count == 1 })
            settle(defaults)
            #expect(name.all.isEmpty)
            #expect(settings.volume == 0.1)
        }
    }

    @Test(arguments: TestBackend.otherProcesses)
    func aChangeByAnotherProcessUpdatesThePropertyAndItsObservers(_ backend: TestBackend) async throws {
        try await backend.withStore { store in
            let settings = PlayerPreferences(store: store.defaults)
            #expect(settings.launches == 0)
            let launches = track { _ = settings.launches }
            let volume = track { _ = settings.volume }

            try store.writeFromAnotherProcess(["player.launches=7"])

            #expect(await eventually { launches.all.count == 1 })
            #expect(settings.launches == 7)
            settle(store.defaults)
            #expect(volume.all.isEmpty)
        }
    }

    @Test(arguments: TestBackend.all)
    func aValueThatCannotBeReadFallsBackToTheDefaultAndIsReported(_ backend: TestBackend) throws {
        try backend.withStore { store in
            let defaults = store.defaults
            defaults.set("loud", forKey: "player.volume")
            defaults.set(["columns": "many"] as [String: String], forKey: "player.layout")
            defaults.set(7, forKey: "player.theme")
            let settings = PlayerPreferences(store: defaults)

            #expect(settings.volume == 0.5)
            #expect(settings.layout == Layout(columns: 2, sidebar: true))
            #expect(settings.theme == .light)
            let reported = store.errors.all
            #expect(reported.compactMap(\.key) == ["player.volume", "player.layout", "player.theme"])
            #expect(reported.allSatisfy { $0.code == .typeMismatch || $0.code == .decodingFailed })
            #expect(defaults.string(forKey: "player.volume") == "loud")   // left in place
        }
    }

    @Test func theInitializersTakeAStoreAStoreStringOrAProviderAPrefixAndTheFlag() throws {
        try withTemporaryDirectory { directory in
            let path = directory.path("settings.json")
            let fromString = try PlayerPreferences(store: "json:\(path)", prefix: "p2.")
            fromString.volume = 0.25
            let reopened = Defaults(try JSONFileProvider(path: path))
            #expect(reopened.double(forKey: "p2.volume") == 0.25)

            let provider = AnyDefaultsMemory.MemoryProvider()
            let fromProvider = PlayerPreferences(provider: provider)
            fromProvider.name = "grace"
            #expect(try provider.value(forKey: "player.name") == .string("grace"))

            #expect(throws: DefaultsError.self) { try PlayerPreferences(store: "nosuchscheme:x") }
        }
    }

    @Test func aClassWithItsOwnInitializerUsesTheMacrosArguments() {
        let model = ConfiguredModel(count: 4)
        #expect(ConfiguredModel.store.integer(forKey: "configured.count") == 4)
        #expect(model.label == "none")
        let tracked = track { _ = model.count }
        ConfiguredModel.store.set(5, forKey: "configured.count")
        #expect(tracked.all.count == 1)
        #expect(model.count == 5)
    }

    @MainActor @Test func observeFirstKeepsUnmarkedPropertiesInMemory() throws {
        let defaults = Defaults(AnyDefaultsMemory.MemoryProvider())
        let editor = EditorState(store: defaults)
        editor.selection = 3
        editor.fontSize = 15
        editor.theme = .dark
        #expect(Set(defaults.keys()) == ["fontSize", "theme_name"])
        #expect(defaults.double(forKey: "fontSize") == 15)
        #expect(EditorState(store: defaults).selection == 0)
    }

    /// With `ignoreExternalChanges`, observers hear of the model's own changes only; reads still
    /// show what is stored.
    @MainActor @Test(arguments: TestBackend.all)
    func ignoringExternalChangesTellsObserversOnlyOfTheModelsOwn(_ backend: TestBackend) throws {
        try backend.withStore { store in
            let defaults = store.defaults
            let editor = EditorState(store: defaults)
            let fontSize = track { _ = editor.fontSize }
            defaults.set(20.0, forKey: "fontSize")
            settle(defaults)
            #expect(fontSize.all.isEmpty)
            #expect(editor.fontSize == 20)

            let own = track { _ = editor.fontSize }
            let theme = track { _ = editor.theme }
            editor.fontSize = 11
            #expect(own.all.count == 1)
            #expect(theme.all.isEmpty)
            #expect(defaults.double(forKey: "fontSize") == 11)
        }
    }

    /// A model isolated to the main actor: changes made on other threads and by the store reach its
    /// observers without touching the model off the main actor.
    @MainActor @Test func aMainActorModelHearsOfChangesMadeOnOtherThreads() async throws {
        let defaults = Defaults(AnyDefaultsMemory.MemoryProvider())
        let settings = InterfaceSettings(store: defaults)
        let zoom = track { _ = settings.zoom }
        let editing = track { _ = settings.isEditing }
        await Task.detached {
            for step in 1...100 { defaults.set(Double(step), forKey: "ui.zoom") }
        }.value
        #expect(zoom.all.count == 1)
        #expect(editing.all.isEmpty)
        #expect(settings.zoom == 100)
        settings.isEditing = true
        #expect(editing.all.count == 1)
    }
}

/// The store of ``ConfiguredModel`` (a macro's arguments cannot refer to the type it is attached to).
let configuredStore = Defaults(AnyDefaultsMemory.MemoryProvider())

/// A model with an initializer of its own: it takes the store and prefix of the macro's arguments.
@ObservableDefaults(store: configuredStore, prefix: "configured.")
final class ConfiguredModel {
    static var store: Defaults { configuredStore }
    var count = 0
    @MemoryOnly var label = "none"

    init(count: Int) {
        self.count = count
    }
}

/// A model isolated to the main actor, as a user interface keeps it.
@MainActor
@ObservableDefaults(prefix: "ui.")
final class InterfaceSettings {
    var zoom = 1.0
    @MemoryOnly var isEditing = false
}
