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

            // Long enough that a stalled thread still pauses more than once before it gives up.
            var wait = FileLockWait(timeout: .seconds(1))
            let started = ContinuousClock.now
            var pauses = 0
            while try !FileLockWait.tryLock(waiter, path: path) {
                guard wait.pause() else { break }
                pauses += 1
            }
            #expect(ContinuousClock.now - started >= .seconds(1))
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
            #expect(FileLockHolder.holders(of: info, kinds: ["FLOCK"]) == [])
            #expect(FileLockHolder.look(atLockOn: waiter) == FileLockHolder.Look(), "free: no holder")
            #expect(try FileLockWait.tryLock(holder, path: path))
            #expect(FileLockHolder.holders(of: info, kinds: ["FLOCK"]) == [getpid()])
            #expect(FileLockHolder.holders(of: info, kinds: ["POSIX"]) == [])
            // Shared locks count only when asked for (every SQLite connection holds one on -shm).
            flock(holder, LOCK_SH)
            #expect(FileLockHolder.holders(of: info, kinds: ["FLOCK"]) == [getpid()])
            #expect(FileLockHolder.holders(of: info, kinds: ["FLOCK"], exclusive: true) == [])
            flock(holder, LOCK_EX)
            #expect(FileLockHolder.holders(of: info, kinds: ["FLOCK"], exclusive: true) == [getpid()])
            // This process is never looked at: its own lock tells nothing of another's work. Its
            // flock is another descriptor's (nothing to tell); among all the locks on a file,
            // it is left out (SQLite's connections all hold some).
            #expect(FileLockHolder.look(atLockOn: waiter) == nil)
            #expect(FileLockHolder.look(atHoldersOfLocksOn: path) == FileLockHolder.Look())
            var wait = FileLockWait(timeout: .milliseconds(20))
            let started = ContinuousClock.now
            while try !FileLockWait.tryLock(waiter, path: path) {
                guard wait.pause(lockOn: waiter) else { break }
            }
            #expect(ContinuousClock.now - started < .seconds(5))
        }
        #endif
    }

    /// The rule past the timeout, look by look, against what it must answer.
    @Test func pastTheTimeoutTheWaitGoesOnWhileTheHoldersWork() {
        typealias Look = FileLockHolder.Look
        func look(_ holders: Set<pid_t>, cpu: UInt64 = 0, dying: Bool = false, stopped: Bool = false, running: Bool = false) -> Look {
            var look = Look()
            (look.holders, look.cpuTicks, look.stopped, look.running) = (holders, cpu, stopped, running)
            look.dyingHolders = dying ? holders : []
            return look
        }
        let start = ContinuousClock.now
        let second = Duration.seconds(1)
        func next(_ patience: inout LockHolderPatience, at offset: Duration, timeout: Duration = .seconds(5), _ seen: Look?) -> Duration? {
            patience.deadline(at: start + offset, timeout: timeout, look: { seen }).map { $0 - start }
        }
        // Nothing to tell (no /proc, another namespace): give up.
        var blind = LockHolderPatience()
        #expect(next(&blind, at: .zero, nil) == nil)
        // Stopped: give up at once, even after working looks.
        var stopped = LockHolderPatience()
        #expect(next(&stopped, at: .zero, look([7], running: true)) == second)
        #expect(next(&stopped, at: second, look([7], cpu: 3, stopped: true)) == nil)
        // Sleeping with the lock: the first look counts as working, the second, unchanged, not.
        var sleeping = LockHolderPatience()
        #expect(next(&sleeping, at: .zero, look([7], cpu: 9)) == second)
        #expect(next(&sleeping, at: second, look([7], cpu: 9)) == nil)
        // Working: CPU time used, another holder, or on a CPU; looked at every min(timeout, 1 s).
        var working = LockHolderPatience()
        #expect(next(&working, at: .zero, look([7], cpu: 9)) == second)
        #expect(next(&working, at: second, look([7], cpu: 10)) == second * 2)
        #expect(next(&working, at: second * 2, look([8], cpu: 10)) == second * 3)
        #expect(next(&working, at: second * 3, look([8], cpu: 10, running: true)) == second * 4)
        #expect(next(&working, at: second * 4, timeout: .milliseconds(200), look([8], cpu: 11)) == second * 4 + .milliseconds(200))
        // Free at that moment: try again at once; free at look after look: give up.
        #expect(next(&working, at: second * 5, look([])) == second * 5)
        var hidden = working
        for _ in 1..<LockHolderPatience.freeLookLimit { #expect(next(&hidden, at: second * 5, look([])) == second * 5) }
        #expect(next(&hidden, at: second * 5, look([])) == nil)
        // Dying: looked at again like a working one.
        #expect(next(&working, at: second * 6, look([8], dying: true)) == second * 7)
        // Never past the limit, counted from the first look.
        let limit = FileLockWait.holderPatienceLimit
        #expect(next(&working, at: limit - .milliseconds(100), look([8], cpu: 12)) == limit)
        #expect(next(&working, at: limit, look([8], cpu: 13)) == nil)
        // A zero timeout waits for a dying holder only: a second look, a millisecond later,
        // decides; a stopped one is not looked at twice.
        var impatient = LockHolderPatience()
        #expect(next(&impatient, at: .zero, timeout: .zero, look([7], running: true)) == .milliseconds(1))
        #expect(next(&impatient, at: .milliseconds(1), timeout: .zero, look([7], running: true)) == nil)
        var stoppedNow = LockHolderPatience()
        #expect(next(&stoppedNow, at: .zero, timeout: .zero, look([7], stopped: true)) == nil)
        var forDying = LockHolderPatience()
        #expect(next(&forDying, at: .zero, timeout: .zero, look([7], dying: true)) == .milliseconds(10))
        // Once dying, always: a thread that took its SIGKILL and has not begun to exit shows
        // neither for a moment. Another holder gets its second look, then no more.
        #expect(next(&forDying, at: .zero, timeout: .zero, look([7], running: true)) == .milliseconds(10))
        #expect(next(&forDying, at: .zero, timeout: .zero, look([9], running: true)) == .milliseconds(1))
        #expect(next(&forDying, at: .zero, timeout: .zero, look([9], running: true)) == nil)
        // A free look does not use up the second look.
        var freeFirst = LockHolderPatience()
        #expect(next(&freeFirst, at: .zero, timeout: .zero, look([])) == .zero)
        #expect(next(&freeFirst, at: .zero, timeout: .zero, look([7], running: true)) == .milliseconds(1))
        // A short timeout does not read /proc at every try: looks are 10 ms apart at least.
        var short = LockHolderPatience()
        #expect(next(&short, at: .zero, timeout: .milliseconds(1), look([7], running: true)) == .milliseconds(10))
    }

    @Test func aZeroTimeoutGivesUpAtOnce() {
        var wait = FileLockWait(timeout: .zero)
        let waited = wait.pause()
        #expect(!waited)
    }
}
