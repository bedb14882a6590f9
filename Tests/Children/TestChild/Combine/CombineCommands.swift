import AnyDefaultsCombine
import Foundation

// What the tests of AnyDefaultsCombine run in a process of their own, because it uses
// process-wide state: `Defaults.standard` (opened from ANYDEFAULTS_STORE, which the parent sets)
// and `PublishedDefaultConfiguration.mock`. What each command does is in main.swift.

func combineDocs(_ arguments: Arguments) throws {
    try arguments.expect(0...0)
    try publishersOnAStore()
    let properties = publishedDefaults()
    let mocked = mocks()
    print("mocked", mocked.volume, "stored", Defaults.standard[.volume])
    withExtendedLifetime(properties) {}
}

func combineMigrate(_ arguments: Arguments) throws {
    try arguments.expect(0...0)
    let service = Service()
    let count = Defaults.standard.value(Double.self, forKey: "count").map { "\($0)" } ?? "none"
    print("index=\(service.index) count=\(count)")
}

func combineMock(_ arguments: Arguments) throws {
    try arguments.expect(1...1)
    let storePath = try arguments.text(0, "path")
    PublishedDefaultConfiguration.mock = true
    let settings = PlayerSettings()
    var published: [String] = []
    let volumes = settings.$volume.sink { published.append("\($0)") }
    settings.volume = 0.9
    settings.nickname = "ada"
    settings.$volume.reset()
    settings.theme = .dark
    let service = Service()  // a migration between mocked properties: nothing to move
    print("published=\(published.joined(separator: ",")) nickname=\(settings.nickname ?? "nil") index=\(service.index)")
    print("opened=\(FileManager.default.fileExists(atPath: storePath))")
    volumes.cancel()

    PublishedDefaultConfiguration.mock = false
    let stored = PlayerSettings()
    stored.volume = 0.3
    print("stored=\(Defaults.standard.double(forKey: "volume"))")
}
