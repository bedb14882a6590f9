@testable import AnyDefaultsCore
import Testing

@Suite struct SharedInstancesTests {
    final class Thing: Sendable {
        let serial: Int
        init(_ serial: Int) { self.serial = serial }
    }

    struct Refused: Error {}

    @Test func oneObjectPerKeyWhileAnyoneHoldsIt() throws {
        let table = SharedInstances<String, Thing>()
        var made = 0
        let first = table.object(for: "a") { made += 1; return Thing(made) }
        let again = table.object(for: "a") { made += 1; return Thing(made) }
        let other = table.object(for: "b") { made += 1; return Thing(made) }
        #expect(first.isNew && !again.isNew && other.isNew)
        #expect(first.object === again.object)
        #expect(first.object !== other.object)
        #expect(made == 2)
    }

    @Test func anObjectNoOneHoldsIsMadeAgain() {
        let table = SharedInstances<String, Thing>()
        var serials: [Int] = []
        for serial in 1...3 {
            let (object, isNew) = table.object(for: "a") { Thing(serial) }
            #expect(isNew)
            serials.append(object.serial)
        }
        #expect(serials == [1, 2, 3])
    }

    @Test func aFailedMakeLeavesNothingBehind() throws {
        let table = SharedInstances<String, Thing>()
        #expect(throws: Refused.self) { try table.object(for: "a") { () throws(Refused) -> Thing in throw Refused() } }
        let made = table.object(for: "a") { Thing(7) }
        #expect(made.isNew && made.object.serial == 7)
    }
}
