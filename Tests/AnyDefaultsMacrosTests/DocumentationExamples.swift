import AnyDefaultsMacros
import Observation          // only for withObservationTracking below; SwiftUI brings it too
import Testing

// The examples of Docs/Macros.md, compiled and run with exactly the imports the page shows (and
// Swift Testing), so the page cannot drift from the API.

enum Theme: String, DefaultsSerializable { case light, dark }
struct Layout: Codable, Hashable, DefaultsCodable { var columns: Int; var sidebar: Bool }

@ObservableDefaults(prefix: "player.")
final class PlayerSettings {
    var volume = 0.5                                   // stored as "player.volume", observable
    var theme = Theme.light                            // any DefaultsSerializable type
    var layout = Layout(columns: 2, sidebar: true)     // Codable, stored as a dictionary
    var nickname: String?                              // nil while nothing is stored
    @SettingKey("server_url") var serverURL = "https://example.com"   // a key of your choosing
    @MemoryOnly var isScrubbing = false                // observable, kept in memory only
    @DefaultsIgnored var scratch = 0                   // neither stored nor observed
}

final class PlainPlayerSettings: DefaultsModel {
    @Setting("volume") var volume = 0.5
    @Setting("theme") var theme = Theme.light
    @Setting("layout") var layout = Layout(columns: 2, sidebar: true)
    @Setting("nickname") var nickname: String?
    @Setting("server_url") var serverURL = "https://example.com"
    @ObservableOnly var isScrubbing = false
    var scratch = 0
}

let editorStore = Defaults(MemoryProvider())         // any store

@ObservableDefaults(store: editorStore, observeFirst: true, ignoreExternalChanges: true)
@MainActor final class EditorSettings {
    var selection = 0                                  // observable only
    @DefaultsBacked var fontSize = 13.0                // stored as "fontSize"
    @DefaultsBacked("theme_name") var theme = Theme.light

    init(fontSize: Double) {
        self.fontSize = fontSize                       // a store write, as anywhere else
    }
}

@DefaultsSchema(prefix: "audio.")
struct Audio {
    var volume = 0.5                        // "audio.volume"
    @SettingKey("is_muted") var muted = false
    var device: String?
}

extension DefaultsKeys {
    static let audioVolume = DefaultsKey<Double>("audio.volume", default: 0.5)
    static let audioMuted = DefaultsKey<Bool>("audio.is_muted", default: false)
}

@Suite struct DocumentationExamples {
    @Test func settingsClasses() throws {
        let defaults = try Defaults(url: "memory:")              // or "sqlite:settings.sqlite": any store
        let settings = PlayerSettings(store: defaults)               // prefix "player." from the macro
        let plain = PlainPlayerSettings(store: defaults, prefix: "player.")
        settings.volume = 0.8
        print(plain.volume)                                           // 0.8: the same key, the same store
        settings.layout.columns += 1

        let changes = Counter()
        let title = withObservationTracking {
            "Volume \(settings.volume)"
        } onChange: {
            changes.add()                      // for a change of "player.volume" only, made anywhere
        }

        #expect(title == "Volume 0.8")
        #expect(plain.volume == 0.8 && plain.layout.columns == 3)
        plain.theme = .dark                    // another property, through the model without macros
        #expect(changes.count == 0)
        plain.volume = 0.3                     // the same key, through the other model
        #expect(changes.count == 1)
        #expect(settings.theme == .dark && settings.serverURL == "https://example.com")
        settings.isScrubbing = true
        settings.scratch = 1
        #expect(Set(defaults.keys()) == ["player.volume", "player.layout", "player.theme"])
    }

    @MainActor @Test func aClassWithItsOwnInitializer() {
        let editor = EditorSettings(fontSize: 15)
        #expect(editorStore.double(forKey: "fontSize") == 15)
        #expect(Set(editorStore.keys()) == ["fontSize"])
        #expect(editor.theme == .light && editor.selection == 0)
    }

    @Test func typedSnapshots() async throws {
        let defaults = try Defaults(url: "memory:")
        let audio = defaults.snapshot(Audio.self)                 // one consistent read
        try defaults.write(Audio.self) { audio in                 // one batch, all or nothing
            audio.volume = 0.8
            audio.muted = true
        }
        for await audio in defaults.snapshots(Audio.self) {       // the current one, then one per change
            print(audio.volume, audio.muted)
            #expect(audio.volume == 0.8 && audio.muted)
            break
        }
        #expect(audio == Audio())

        let keys = [DefaultsKeys.audioVolume, DefaultsKeys.audioMuted]
        let values = try defaults.throwing.consistentSnapshot(keys: keys)     // one consistent read
        try defaults.write { tx in                                             // one batch
            tx[.audioVolume] = 0.8
            tx[.audioMuted] = true
        }
        for await values in defaults.snapshots(keys: keys) {
            print(values[.audioVolume], values[.audioMuted])
            #expect(values[.audioVolume] == 0.8)
            break
        }
        #expect(values[.audioMuted])   // written by the schema example above
    }
}
