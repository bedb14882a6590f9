import AnyDefaults
import Foundation
import Testing
import TestSupport

import AnyDefaultsPlatform

/// What a writer does past its lock timeout, by what the holder of the store's write lock does:
/// a holder that works (killed and exiting, or committing back to back) is waited for, one that
/// is stuck (stopped, or asleep with the lock) is not (`LockHolderPatience`).
@Suite(.ownThreads) struct LockHolderTests {
    /// A writer killed while it holds a store's write lock keeps the lock until the kernel has
    /// closed its files, which can take seconds under load (on Linux, releasing the inotify
    /// instance of a process that watches waits for an RCU grace period and runs before the lock's
    /// file is released; see `FileLockHolder`). Another writer waits for that exit past its lock
    /// timeout instead of failing with `busy`, as three processes of `LMDBStressTests` once did; a
    /// stopped holder still makes it give up at the timeout. The timeout is zero, so that the exit
    /// always outlasts it.
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

    /// A lock timeout is for a holder that is stuck, not for one that works. A process that commits
    /// back to back keeps a store's write lock nearly all the time, and a waiter that polls can
    /// miss the moments it is free for seconds on a loaded machine (three processes of
    /// `LMDBStressTests` once failed with `busy` so). Another writer waits for such a holder past
    /// its timeout (up to `FileLockWait.holderPatienceLimit`) and gets its turn once the holder
    /// stops; a holder that keeps the lock and does nothing still makes it give up soon after the
    /// timeout.
    @Test(arguments: ["sqlite", "lmdb", "json"])
    func aWriterWaitsForAHolderThatWorksAndNotForOneThatSleeps(scheme: String) throws {
        #if os(Linux)
        try withTemporaryDirectory { directory in
            let location = directory.path(scheme == "lmdb" ? "store" : "store.\(scheme)")
            let holding = "\(scheme):\(location)"
            // Kept open, so that SQLite's `-shm` stays the file the child locks.
            let first = try ProviderRegistry.standard.makeProvider(holding)
            try first.setValue(.int(0), forKey: "k")
            let store = try ProviderRegistry.standard.makeProvider(holding + "?locktimeout=1&cache=off")

            // Working: it keeps the lock 20 ms at a time for three seconds, using the CPU.
            let (hog, hogOutput, _) = try ChildProcess.start("TestChild", ["hog-lock", holding, "3"])
            defer {
                // Reaped, not only killed: a zombie child makes Swift Testing's exit-test monitor
                // spin and the exit tests wait forever.
                kill(hog.processIdentifier, SIGKILL)
                hog.waitUntilExit()
            }
            #expect(String(decoding: hogOutput.fileHandleForReading.availableData, as: UTF8.self) == "locked\n")
            #expect(throws: Never.self) { try store.setValue(.int(1), forKey: "k") }
            #expect(try store.value(forKey: "k") == .int(1))
            hog.waitUntilExit()
            #expect(hog.terminationReason == .exit && hog.terminationStatus == 0)

            // Sleeping with the lock: busy after the timeout and one more look at it.
            let sleeper = try LockHoldingChild(store: holding)
            defer { sleeper.end() }
            #expect(sleeper.isHolding)
            let started = ContinuousClock.now
            let error = #expect(throws: DefaultsError.self) { try store.setValue(.int(2), forKey: "k") }
            #expect(error?.code == .busy)
            let waited = ContinuousClock.now - started
            #expect(waited >= .seconds(1) && waited < .seconds(15), "\(waited)")
            #expect(try first.value(forKey: "k") == .int(1))
        }
        #endif
    }

    /// An observer that starts while another process holds the store's write lock (a long
    /// transaction, a stopped writer, the `sqlite3` shell inside `BEGIN IMMEDIATE`) neither waits
    /// for the lock timeout to start nor goes deaf: its watch takes its lease once the lock is
    /// free, and it hears what other processes write from then on, and what they wrote meanwhile.
    @Test(arguments: ["sqlite", "lmdb"])
    func anObserverStartedWhileTheLockIsHeldHearsOtherProcessesOnceItIsFree(scheme: String) throws {
        #if os(Linux)
        try withTemporaryDirectory { directory in
            let location = directory.path(scheme == "lmdb" ? "store" : "store.\(scheme)")
            let holding = "\(scheme):\(location)"
            // Kept open, so that SQLite's `-shm` stays the file the child locks. A lock timeout no
            // test waits for (LMDB's environment, shared in the process, keeps the first one's).
            let first = try ProviderRegistry.standard.makeProvider(holding + "?cache=off&locktimeout=60")
            try first.setValue(.int(0), forKey: "k")

            let holder = try LockHoldingChild(store: holding)
            defer { holder.end() }
            #expect(holder.isHolding)
            // Starting must not wait for the lock timeout.
            let started = ContinuousClock.now
            let store = try ProviderRegistry.standard.makeProvider(holding + "?locktimeout=60")
            let events = EventLog(store)
            #expect(ContinuousClock.now - started < .seconds(30), "starting the observer waited for the lock")
            #expect(try store.value(forKey: "k") == .int(0))

            holder.end()
            // Written while the watch may not have its lease yet, then after it surely has.
            let during = try ChildProcess.run("TestChild", ["apply", holding, "k=1"])
            try #require(during.status == 0, "\(during.standardError)")
            #expect(waitUntil { events.all.contains { $0.key == "k" && $0.newValue == .int(1) } }, "\(events.all)")
            let after = try ChildProcess.run("TestChild", ["apply", holding, "later=2"])
            try #require(after.status == 0, "\(after.standardError)")
            #expect(waitUntil { events.all.contains { $0.key == "later" && $0.newValue == .int(2) } }, "\(events.all)")
            #expect(events.all.allSatisfy { $0.origin == .external })
        }
        #endif
    }
}
