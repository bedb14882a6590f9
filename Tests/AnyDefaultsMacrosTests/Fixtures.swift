import AnyDefaultsMacros
import Foundation

// Theme and Layout are the declarations of Docs/Macros.md, in DocumentationExamples.swift.

@ObservableDefaults(prefix: "player.")
final class PlayerPreferences {
    var volume = 0.5
    var name: String = "guest"
    var nickname: String?
    var theme = Theme.light
    var layout = Layout(columns: 2, sidebar: true)
    var tags: [String] = []
    var scores: [String: Int] = [:]
    var launches = 0
    @SettingKey("server_url") var serverURL = "https://example.com"
    @MemoryOnly var isScrubbing = false
    @DefaultsIgnored var scratch = 0
}

@MainActor
@ObservableDefaults(observeFirst: true, ignoreExternalChanges: true)
final class EditorState {
    var selection = 0
    @DefaultsBacked var fontSize = 13.0
    @DefaultsBacked("theme_name") var theme: Theme = .light
}

@DefaultsSchema(prefix: "audio.")
struct AudioSettings {
    var volume = 0.5
    @SettingKey("is_muted") var muted = false
    var device: String?
    var layout = Layout(columns: 1, sidebar: false)
    var plays = 0
}
