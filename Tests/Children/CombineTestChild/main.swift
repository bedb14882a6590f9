// Another process for the tests of AnyDefaultsCombine, for what uses process-wide state:
// `Defaults.standard` (opened from ANYDEFAULTS_STORE, which the parent sets) and
// `PublishedDefaultConfiguration.mock`.
//
//   CombineTestChild docs
//       Runs the examples of Docs/Combine.md (DocumentationExamples.swift); they print.
//
//   CombineTestChild migrate
//       One launch of a program that migrates "count" to "index" (the documented `Service`),
//       printing "index=<index> count=<stored count or none>".
//
//   CombineTestChild mock <path>
//       Sets the process-wide mock flag, then uses properties on the standard store (reads,
//       writes, subscriptions, a migration), printing what they published and whether a file is
//       at <path> (the store's, which must not have been opened); then clears the flag and
//       writes through a new property, which reaches the store ("stored=<volume>").
//
// Exit status 1 and the error on standard error if anything fails.
import AnyDefaultsCombine
import Foundation

func fail(_ message: String) -> Never {
    FileHandle.standardError.write(Data("CombineTestChild: \(message)\n".utf8))
    exit(1)
}

func docs() throws {
    try publishersOnAStore()
    let properties = publishedDefaults()
    let mocked = mocks()
    print("mocked", mocked.volume, "stored", Defaults.standard[.volume])
    withExtendedLifetime(properties) {}
}

func migrate() {
    let service = Service()
    let count = Defaults.standard.value(Double.self, forKey: "count").map { "\($0)" } ?? "none"
    print("index=\(service.index) count=\(count)")
}

func mock(storePath: String) {
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

do {
    switch CommandLine.arguments.dropFirst().first {
    case "docs": try docs()
    case "migrate": migrate()
    case "mock" where CommandLine.arguments.count == 3: mock(storePath: CommandLine.arguments[2])
    default: fail("usage: CombineTestChild docs | migrate | mock <path>")
    }
} catch {
    fail("\(error)")
}
