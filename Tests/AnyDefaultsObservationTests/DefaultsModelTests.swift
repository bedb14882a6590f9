import AnyDefaults
import Observation
import Testing

final class PlayerSettings: DefaultsModel {
    @Setting("volume") var volume = 0.5
    @Setting("theme") var theme = Theme.light
    @Setting("nickname") var nickname: String?
    @Setting(.layout) var layout
    @Setting("server_url") var serverURL = "https://example.com"
    @ObservableOnly var isScrubbing = false
    var scratch = 0
}

/// A model isolated to the main actor, as a user interface keeps it.
@MainActor final class InterfaceSettings: DefaultsModel {
    @Setting("zoom") var zoom = 1.0
    @ObservableOnly var isEditing = false
}

@Suite struct DefaultsModelTests {
    @MainActor @Test func aModelOnTheMainActor() {
        let defaults = Defaults(AnyDefaultsMemory.MemoryProvider())
        let settings = InterfaceSettings(store: defaults, prefix: "ui.")
        let zoom = track { _ = settings.zoom }
        let editing = track { _ = settings.isEditing }
        settings.isEditing = true
        #expect(zoom.count == 0)
        #expect(editing.count == 1)
        defaults.set(2.0, forKey: "ui.zoom")
        #expect(zoom.count == 1)
        #expect(settings.zoom == 2)
    }

    @Test(arguments: Backend.allCases) func settingsLiveInTheStoreUnderThePrefix(backend: Backend) throws {
        let fixture = try backend.fixture()
        defer { fixture.remove() }
        let defaults = try fixture.open()
        let settings = PlayerSettings(store: defaults, prefix: "player.")
        #expect(settings.volume == 0.5)
        #expect(settings.nickname == nil)
        #expect(settings.layout == Layout(columns: 2, sidebar: true))

        settings.volume = 0.8
        settings.theme = .dark
        settings.nickname = "ada"
        settings.layout.columns = 4
        settings.serverURL = "https://other.example"
        settings.isScrubbing = true
        settings.scratch = 7

        #expect(defaults.double(forKey: "player.volume") == 0.8)
        #expect(defaults.string(forKey: "player.theme") == "dark")
        #expect(defaults.string(forKey: "player.nickname") == "ada")
        #expect(defaults.string(forKey: "player.server_url") == "https://other.example")
        #expect(defaults.codable(Layout.self, forKey: "player.layout") == Layout(columns: 4, sidebar: true))
        #expect(Set(defaults.keys()) == ["player.volume", "player.theme", "player.nickname", "player.layout", "player.server_url"])

        settings.nickname = nil
        #expect(!defaults.hasValue(forKey: "player.nickname"))

        let again = PlayerSettings(store: defaults, prefix: "player.")
        #expect(again.volume == 0.8)
        #expect(again.theme == .dark)
        #expect(again.isScrubbing == false)   // not stored

        settings.resetAll()
        #expect(again.volume == 0.5)
        #expect(defaults.keys().isEmpty)
    }

    @Test(arguments: Backend.allCases) func eachPropertyIsObservedAlone(backend: Backend) throws {
        let fixture = try backend.fixture()
        defer { fixture.remove() }
        let defaults = try fixture.open()
        let settings = PlayerSettings(store: defaults, prefix: "player.")
        settle(defaults)
        let volume = track { _ = settings.volume }
        let theme = track { _ = settings.theme }
        let scrubbing = track { _ = settings.isScrubbing }
        let scratch = track { _ = settings.scratch }

        settings.theme = .dark
        settle(defaults)
        #expect(volume.count == 0)
        #expect(theme.count == 1)
        #expect(scrubbing.count == 0)

        settings.isScrubbing = true
        #expect(scrubbing.count == 1)
        #expect(volume.count == 0)

        settings.scratch = 3            // ignored: not observed
        #expect(scratch.count == 0)

        settings.volume = 0.1
        settle(defaults)
        #expect(volume.count == 1)
    }

    @Test(arguments: Backend.allCases) func changesMadeElsewhereReachTheModel(backend: Backend) throws {
        let fixture = try backend.fixture()
        defer { fixture.remove() }
        let reader = try fixture.open()
        let settings = PlayerSettings(store: reader, prefix: "player.")
        let other = PlayerSettings(store: try fixture.open(), prefix: "player.")
        let elsewhere = try fixture.open()
        let volume = track { _ = settings.volume }
        let theme = track { _ = settings.theme }

        other.volume = 0.3                                    // another model, another Defaults
        settle(reader)
        #expect(volume.count == 1)
        #expect(settings.volume == 0.3)

        elsewhere.set("dark", forKey: "player.theme")        // a write by name
        settle(reader)
        #expect(theme.count == 1)
        #expect(settings.theme == .dark)

        let unrelated = track { _ = settings.volume }
        elsewhere.set(1, forKey: "volume")                    // outside the prefix
        settle(reader)
        #expect(unrelated.count == 0)
    }

    @Test func modelsWithDifferentPrefixesAreIndependent() {
        let defaults = Defaults(AnyDefaultsMemory.MemoryProvider())
        let left = PlayerSettings(store: defaults, prefix: "left.")
        let right = PlayerSettings(store: defaults, prefix: "right.")
        let rightVolume = track { _ = right.volume }
        left.volume = 0.9
        #expect(right.volume == 0.5)
        #expect(rightVolume.count == 0)
        #expect(left.prefix == "left.")
    }
}
