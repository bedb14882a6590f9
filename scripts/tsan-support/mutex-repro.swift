// A correct use of Synchronization.Mutex from eight threads. Built with -sanitize=thread, TSan on
// Linux reports a race in it unless mutex-annotations.c is preloaded (see scripts/tsan).
import Synchronization
import Foundation

final class Counter: Sendable {
    let value = Mutex<Int>(0)
}
let counter = Counter()
let threads = (0..<8).map { _ in
    Thread {
        for _ in 0..<5_000 { counter.value.withLock { $0 += 1 } }
    }
}
threads.forEach { $0.start() }
while counter.value.withLock({ $0 }) < 40_000 { usleep(1000) }
print("total", counter.value.withLock { $0 })
