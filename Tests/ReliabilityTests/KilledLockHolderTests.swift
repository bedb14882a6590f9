import AnyDefaults
import Foundation
import Testing
import TestSupport

import AnyDefaultsPlatform

/// A writer killed while it holds a store's write lock keeps the lock until the kernel has closed
/// its files, which can take seconds under load (on Linux, releasing the inotify instance of a
/// process that watches waits for an RCU grace period and runs before the lock's file is
/// released; see `FileLockHolder`). Another writer waits for that exit past its lock timeout
/// instead of failing with `busy`, as three processes of `LMDBStressTests` once did; a stopped
/// holder still makes it give up at the timeout. The timeout is zero, so that the exit always
/// outlasts it.
@Suite(.ownThreads) struct KilledLockHolderTests {
    @Test(arguments: ["sqlite", "lmdb", "json"])
    func aWriterWaitsPastItsTimeoutForAKilledHolderToExit(scheme: String) throws {
        #if os(Linux)
        try withTemporaryDirectory { directory in
            let location = directory.path(scheme == "lmdb" ? "store" : "store.\(scheme)")
            // LMDB: no sync, so that the holder commits fast and is often caught holding the lock.
            let holding = scheme == "lmdb" ? "\(scheme):\(location)?durability=nosync" : "\(scheme):\(location)"
            try ProviderRegistry.standard.makeProvider(holding).setValue(.int(0), forKey: "k")
            guard let holder = try StoppedWriter(store: holding, isHeld: { StoppedWriter.holdsWriteLock(scheme: scheme, location: location) }) else {
                Issue.record("The child was never stopped while it held the write lock.")
                return
            }
            defer { holder.end() }
            let store = try ProviderRegistry.standard.makeProvider(holding + (holding.contains("?") ? "&" : "?") + "locktimeout=0&cache=off")
            // Stopped, it is not waited for.
            let error = #expect(throws: DefaultsError.self) { try store.setValue(.int(1), forKey: "k") }
            #expect(error?.code == .busy)

            // Killed, it holds the lock until its exit is through: the write waits for that.
            kill(holder.process.processIdentifier, SIGKILL)
            #expect(throws: Never.self) { try store.setValue(.int(2), forKey: "k") }
            #expect(try store.value(forKey: "k") == .int(2))
        }
        #endif
    }
}
