import AnyDefaults
import Dispatch
import Foundation
import Synchronization

import AnyDefaultsPlatform

/// What happens when SIGINT, SIGTERM or SIGHUP ends a command: installed for every command when
/// the tool starts.
///
/// At once, the temporary files of the file replacements under way are removed
/// (``FileReplacement/removeTemporaryFilesInProgress()``: an interrupted `export --output`, or a
/// store's file being rewritten, leaves the old file and nothing else). Then the live scratch
/// areas (``ScratchArea``) are removed: the command itself stops at its next
/// ``ScratchArea/checkInterruption()`` and removes its areas as it unwinds, so that nothing it
/// writes afterwards recreates what was removed; if it has not done so within ten seconds (a
/// conformance group cannot be stopped half-way), or a second signal comes, the handler removes
/// them, and removes again for a moment what a write still under way recreates (best effort: a
/// command stopped at once may still be writing). The process then ends with status 128 + the
/// signal's number, as a shell reports it, or with the status a command chose for a signal
/// (`watch` exits 0 on SIGINT).
///
/// SIGPIPE is ignored, so that writing to a closed pipe fails with `EPIPE` and the command exits
/// with status 74 like any other output failure (``Console``).
enum Interrupts {
    private static let signals = [SIGINT, SIGTERM, SIGHUP]
    private static let state = Mutex<State>(State())
    /// The signal that interrupted the command, or 0.
    static let interruption = Atomic<Int32>(0)

    private struct State {
        var areas: [ObjectIdentifier: ScratchArea] = [:]
        var sources: [any DispatchSourceSignal] = []
        var statuses: [Int32: Int32] = [:]
    }

    /// Takes over SIGINT, SIGTERM and SIGHUP, and ignores SIGPIPE. Call it once, first.
    static func install() {
        signal(SIGPIPE, SIG_IGN)
        state.withLock { state in
            guard state.sources.isEmpty else { return }
            for number in signals {
                // Ignored as a plain signal, so that only the source below receives it.
                signal(number, SIG_IGN)
                // A queue of its own per signal (a serial queue gets a thread even when the shared
                // pool is busy), so that the cleanup runs however busy the command keeps the global
                // queues.
                let queue = DispatchQueue(label: "anydefaults.interrupt.\(number)", qos: .userInteractive)
                let source = DispatchSource.makeSignalSource(signal: number, queue: queue)
                source.setEventHandler { interrupt(by: number) }
                source.resume()
                state.sources.append(source)
            }
        }
    }

    /// Makes `signal` end the process with `status` (after the cleanup) instead of 128 + its number.
    static func exit(on signal: Int32, with status: Int32) {
        state.withLock { $0.statuses[signal] = status }
    }

    static func register(_ area: ScratchArea) {
        state.withLock { $0.areas[ObjectIdentifier(area)] = area }
    }

    static func unregister(_ area: ScratchArea) {
        state.withLock { _ = $0.areas.removeValue(forKey: ObjectIdentifier(area)) }
    }

    private static func interrupt(by number: Int32) {
        FileReplacement.removeTemporaryFilesInProgress()
        guard interruption.compareExchange(expected: 0, desired: number, ordering: .relaxed).exchanged else {
            // A second signal: stop at once.
            finish(number)
        }
        // The wait runs on a thread of its own, so that this source can take a second signal.
        Thread {
            let start = ContinuousClock.now
            var noted = false
            while ContinuousClock.now - start < .seconds(10), !state.withLock({ $0.areas.isEmpty }) {
                if !noted, ContinuousClock.now - start > .milliseconds(500) {
                    noted = true
                    Console.error("interrupted: removing the scratch storage once the current step ends (interrupt again to stop at once).")
                }
                usleep(10_000)
            }
            finish(number)
        }.start()
    }

    /// Removes what is left and ends the process with the status for `number`.
    private static func finish(_ number: Int32) -> Never {
        let (areas, status) = state.withLock { (Array($0.areas.values), $0.statuses[number] ?? 128 + number) }
        FileReplacement.removeTemporaryFilesInProgress(refusingNewOnes: true)
        for area in areas { area.remove() }
        // The command may still be writing (a second signal, or a step that would not end): for a
        // moment, remove again what a write under way recreates, until nothing comes back.
        var quiet = 0
        for _ in 0..<40 where !areas.isEmpty && quiet < 3 {
            usleep(25_000)
            let recreated = areas.filter(\.hasStorage)
            quiet = recreated.isEmpty ? quiet + 1 : 0
            for area in recreated { area.removeStorage() }
        }
        // `_exit`, not `raise`: this runs on a thread that blocks signals.
        _exit(status)
    }
}
