import AnyDefaultsCombine

// The examples of Docs/Combine.md, with exactly the import the document shows. `TestChild
// combine-docs` runs them (CombineCommands.swift) and the Combine tests' DocumentationTests compare
// what they print with the document's comments.

enum Theme: String, DefaultsSerializable { case light, dark }

extension DefaultsKeys {
    static let volume = DefaultsKey<Double>("volume", default: 0.5)
    static let muted = DefaultsKey<Bool>("muted", default: false)
    static let theme = DefaultsKey<Theme>("theme", default: .light)
}

func publishersOnAStore() throws {
    let defaults = try Defaults(url: "memory:")               // any store: json:, sqlite:, lmdb:, ...

    let volume = defaults.publisher(for: .volume).sink { print("volume", $0) }
    defaults[.volume] = 0.8
    defaults[.volume] = 0.8                                   // the same value: nothing
    defaults.reset(.volume)
    volume.cancel()                                           // stops observing, lets go of the store

    let font = defaults.publisher(forKey: "ui.font", as: String.self).sink { print("font", $0 ?? "none") }
    defaults.set("mono", forKey: "ui.font")
    font.cancel()

    let audio = defaults.publisher(forKeys: [DefaultsKeys.volume, DefaultsKeys.muted])
        .sink { print("audio", $0[.volume], $0[.muted]) }
    try defaults.write { tx in                               // one batch: one snapshot
        tx[.volume] = 0.2
        tx[.muted] = true
    }
    audio.cancel()

    let everything = defaults.snapshotPublisher().sink { print("keys", $0.keys.sorted()) }
    everything.cancel()
}

final class PlayerSettings: ObservableObject {
    let objectWillChange = ObservableObjectPublisher()    // needed when no property is @Published
    @PublishedDefault(.volume) var volume                  // a typed key gives the name and default
    @PublishedDefault("nickname") var nickname: String?    // nil until set; nil removes the key
    @PublishedDefault(.theme, behavior: .willSet) var theme
}

func publishedDefaults() -> [AnyCancellable] {
    let settings = PlayerSettings()                            // on Defaults.standard
    let printer = settings.$volume.sink { print("published", $0, "property", settings.volume) }
    settings.volume = 0.8

    let themes = settings.$theme.sink { print("published", $0, "property", settings.theme) }
    settings.theme = .dark
    return [printer, themes]
}

func mocks() -> PlayerSettings {
    PublishedDefaultConfiguration.mock = true                 // every property, e.g. in tests
    let mocked = PlayerSettings()
    mocked.volume = 0.1                                       // kept in memory: no store is read or written
    PublishedDefaultConfiguration.mock = false
    return mocked
}

final class Service: ObservableObject {
    let objectWillChange = ObservableObjectPublisher()
    @PublishedDefault("count") private var legacyCount = 1.0    // the old key held a Double
    @PublishedDefault("index") var index = 0

    init() {
        $legacyCount.migrate(to: $index) { Int($0) - 1 }       // at every launch: moves once
    }
}
