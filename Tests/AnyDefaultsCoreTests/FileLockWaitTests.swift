@testable import AnyDefaultsCore
import AnyDefaultsPlatform
import Foundation
import Testing
import TestSupport

@Suite struct FileLockWaitTests {
    @Test func waitsForTheHolderAndGivesUpAtTheTimeout() throws {
        try withTemporaryDirectory { directory in
            let path = directory.path("lock")
            // flock locks belong to an open file description: two opens conflict even in one process.
            let holder = open(path, O_RDWR | O_CREAT | O_CLOEXEC, 0o600)
            let waiter = open(path, O_RDWR | O_CLOEXEC)
            defer { close(holder); close(waiter) }
            #expect(try FileLockWait.tryLock(holder, path: path))
            #expect(try !FileLockWait.tryLock(waiter, path: path))

            var wait = FileLockWait(timeout: .milliseconds(50))
            let started = ContinuousClock.now
            var pauses = 0
            while try !FileLockWait.tryLock(waiter, path: path) {
                guard wait.pause() else { break }
                pauses += 1
            }
            #expect(ContinuousClock.now - started >= .milliseconds(50))
            #expect(pauses > 1)

            flock(holder, LOCK_UN)
            var second = FileLockWait(timeout: .seconds(5))
            var taken = false
            while !taken {
                taken = try FileLockWait.tryLock(waiter, path: path)
                if !taken {
                    let waited = second.pause()
                    #expect(waited)
                }
            }
            #expect(try !FileLockWait.tryLock(holder, path: path))
        }
    }

    @Test func aDescriptorThatCannotBeLockedIsAnError() {
        #expect(throws: SystemCallError.self) { try FileLockWait.tryLock(-1, path: "/nowhere") }
    }

    /// The holder of a lock is found in /proc/locks; a live one is not dying, so a wait on it
    /// ends at the timeout.
    @Test func aLiveHolderIsFoundAndNotWaitedForPastTheTimeout() throws {
        #if os(Linux)
        try withTemporaryDirectory { directory in
            let path = directory.path("lock")
            let holder = open(path, O_RDWR | O_CREAT | O_CLOEXEC, 0o600)
            let waiter = open(path, O_RDWR | O_CLOEXEC)
            defer { close(holder); close(waiter) }
            var info = stat()
            #expect(fstat(waiter, &info) == 0)
            #expect(FileLockHolder.holders(of: info, kinds: ["FLOCK"]).isEmpty)
            #expect(try FileLockWait.tryLock(holder, path: path))
            #expect(FileLockHolder.holders(of: info, kinds: ["FLOCK"]) == [getpid()])
            #expect(FileLockHolder.holders(of: info, kinds: ["POSIX"]).isEmpty)
            #expect(!FileLockHolder.isDying(lockOn: waiter))
            #expect(!FileLockHolder.isDying(holderOfLocksOn: path))
            var wait = FileLockWait(timeout: .milliseconds(20))
            let started = ContinuousClock.now
            while try !FileLockWait.tryLock(waiter, path: path) {
                guard wait.pause(lockOn: waiter) else { break }
            }
            #expect(ContinuousClock.now - started < .seconds(5))
        }
        #endif
    }

    @Test func aZeroTimeoutGivesUpAtOnce() {
        var wait = FileLockWait(timeout: .zero)
        let waited = wait.pause()
        #expect(!waited)
    }
}
