import AnyDefaultsCombine
import Foundation
import Testing
import TestSupport

/// Changes made by another, real process (TestChild) reach the publishers and the
/// `@PublishedDefault` properties of this one, on every backend that reports such changes.
@Suite(.ownThreads) struct OtherProcessTests {
    @Test(arguments: Backend.reportingOtherProcesses, [true, false])
    func aChangeByAnotherProcessIsPublished(_ backend: Backend, cached: Bool) async throws {
        try await backend.withStore(cached: cached) { defaults, configuration in
            #expect(defaults.provider.capabilities.contains(.externalChanges))
            let counts = Recorder<Int>()
            let snapshots = Recorder<Int>()
            let model = AudioModel(store: defaults, behavior: .willSet)
            let volumes = Recorder<String>()
            let objectChanges = Recorder<Bool>()
            var cancellables = [
                defaults.publisher(for: .count).sink { counts.record($0) },
                defaults.snapshotPublisher().sink { snapshots.record($0[.count]) },
                model.$volume.sink { volumes.record("\($0) \(model.volume)") },
                model.objectWillChange.sink { objectChanges.record(isOnMainQueue()) },
            ]

            try Backend.writeFromAnotherProcess(configuration, ["count=7", "volume=1"])
            #expect(await eventually { counts.all == [0, 7] && volumes.all.count == 2 && objectChanges.all.count == 1 })
            #expect(volumes.all == ["0.5 0.5", "1.0 0.5"])  // published before the property changed
            #expect(model.volume == 1)
            #expect(objectChanges.all == [true])  // on the main queue
            #expect(snapshots.all.first == 0 && snapshots.all.last == 7)

            try Backend.writeFromAnotherProcess(configuration, ["-count"])
            #expect(await eventually { counts.all == [0, 7, 0] })
            cancellables.removeAll()
        }
    }
}
