import AnyDefaults
import Observation
import Testing
import TestSupport

/// Generated reads and writes against a dictionary of what is stored: a read of a key inside
/// `withObservationTracking` fires once when that key's stored value changes, and never for
/// another key or a write of what is already stored, whichever way the key was read (a typed
/// key, by name, a typed key of a scoped view) and written (a typed key of this store or of
/// another `Defaults` on the same provider, by name, a batch, the provider itself). Over a cache,
/// a typed key's events carry the key path kept in its read slot, and every other way looks it
/// up by name: the two must name the same key, which only mixing them shows.
@Suite struct ObservationModelTests {
    enum Read: CaseIterable { case typed, byName, scoped }
    enum Write: CaseIterable { case typed, otherTyped, byName, batch, provider }

    @Test(arguments: [(UInt64(1), true), (2, true), (3, true), (4, false), (5, false)])
    func observationFollowsAReferenceModel(seed: UInt64, cached: Bool) throws {
        var random = SeededGenerator(seed: seed)
        let memory = MemoryProvider()
        let cache = memory.cached()
        let provider: any DefaultsProvider = cached ? cache : memory
        let defaults = Defaults(provider, cached: false, tracksReadsByName: true)
        let other = Defaults(provider, cached: false)
        #expect(defaults.isCached == cached)
        let scope = defaults.scoped("s.")
        let names = ["s.a", "s.b", "c"]
        let keys = names.map { DefaultsKey<Int>($0, default: 0) }
        let otherKeys = names.map { DefaultsKey<Int>($0, default: 0) }
        let scopedKeys = ["a", "b"].map { DefaultsKey<Int>($0, default: 0) }
        var model: [String: Int] = [:]
        for step in 0..<600 {
            let read = Int(random.next() % UInt64(names.count))
            let written = Int(random.next() % UInt64(names.count))
            let value = Int(random.next() % 3)
            var how = Read.allCases[Int(random.next() % 3)]
            if how == .scoped, read == 2 { how = .typed }
            let changes = track {
                switch how {
                case .typed: _ = defaults[keys[read]]
                case .byName: _ = defaults.integer(forKey: names[read])
                case .scoped: _ = scope[scopedKeys[read]]
                }
            }
            let write = Write.allCases[Int(random.next() % 5)]
            switch write {
            case .typed: defaults[keys[written]] = value
            case .otherTyped: other[otherKeys[written]] = value
            case .byName: defaults.set(value, forKey: names[written])
            case .batch: try provider.apply([.set(names[written], .int(Int64(value)))])
            case .provider: try provider.setValue(.int(Int64(value)), forKey: names[written])
            }
            let fires = read == written && model[names[written]] != value
            model[names[written]] = value
            #expect(changes.count == (fires ? 1 : 0), "step \(step): read \(names[read]) \(how), wrote \(names[written]) \(write)")
        }
        for (index, name) in names.enumerated() { #expect(defaults[keys[index]] == model[name] ?? 0) }
    }
}
