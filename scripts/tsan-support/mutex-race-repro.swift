// mutex-repro.swift plus one real race (an unprotected counter): TSan must still report it with
// mutex-annotations.c preloaded (see scripts/tsan).
import Synchronization
import Foundation

final class Counter: @unchecked Sendable {
    let value = Mutex<Int>(0)
    var unprotected = 0
}
let counter = Counter()
let threads = (0..<8).map { _ in
    Thread {
        for _ in 0..<5_000 {
            counter.value.withLock { $0 += 1 }
            counter.unprotected += 1
        }
    }
}
threads.forEach { $0.start() }
while counter.value.withLock({ $0 }) < 40_000 { usleep(1000) }
print("total", counter.value.withLock { $0 })
