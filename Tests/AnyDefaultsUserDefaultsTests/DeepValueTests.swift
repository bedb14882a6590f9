import AnyDefaultsCore
import AnyDefaultsUserDefaults
import Foundation
import Synchronization
import Testing

/// A value at the maximum nesting depth is written, read back and listed on a thread with a
/// 512 KiB stack. The property-list conversions, writer and reader recursed once per level, with
/// frames large enough to overflow that stack (the conformance suite's smallStack.maximumDepth
/// crashed its child process); they use explicit stacks now. A regression crashes this process.
@Suite struct DeepValueTests {
    static func nested(_ depth: Int) -> DefaultsValue {
        var value = DefaultsValue.string("leaf")
        for level in 0..<depth { value = level.isMultiple(of: 2) ? .array([value, .int(Int64(level))]) : .dictionary(["d": value, "e": .bool(true)]) }
        return value
    }

    @Test func aValueAtTheMaximumDepthWorksOnASmallStack() throws {
        try withTestSuite { suite in
            let outcome = Mutex<String?>("the thread did not finish")
            let done = DispatchSemaphore(value: 0)
            let thread = Thread {
                outcome.withLock { outcome in
                    do {
                        let deep = Self.nested(DefaultsValue.maximumNestingDepth)
                        let provider = try suite.provider()
                        try provider.setValue(deep, forKey: "deep")
                        let again = try suite.provider()
                        outcome = try again.value(forKey: "deep") == deep && again.allValues()["deep"] == deep ? nil : "read back differently"
                    } catch {
                        outcome = "\(error)"
                    }
                }
                done.signal()
            }
            thread.stackSize = 512 * 1024
            thread.start()
            done.wait()
            #expect(outcome.withLock { $0 } == nil)
        }
    }
}
