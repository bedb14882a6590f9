import AnyDefaults
import Foundation
import Synchronization
import Testing
import TestSupport

/// A namespace no other test uses.
func freshNamespace(_ label: String = #function) -> String {
    "\(label.prefix(while: { $0 != "(" }))-\(UUID().uuidString.prefix(8))"
}

/// Opens the same namespace over TCP (with the password): another connection, so another replica
/// in this process, as another machine would have.
func openOverTCP(_ cluster: PostgreSQLCluster, namespace: String) throws -> PostgreSQLProvider {
    try PostgreSQLProvider(url: cluster.tcpStoreString(namespace: namespace, options: "&password=\(cluster.password)"))
}

/// Polls `condition` until it holds or `timeout` passes; returns whether it held.
func eventually(timeout: Duration = .seconds(10), _ condition: () throws -> Bool) rethrows -> Bool {
    let clock = ContinuousClock()
    let deadline = clock.now + timeout
    while clock.now < deadline {
        if try condition() { return true }
        Thread.sleep(forTimeInterval: 0.005)
    }
    return try condition()
}

extension EventLog {
    /// The values `key` took, event by event.
    func values(of key: String) -> [DefaultsValue?] { all.filter { $0.key == key }.map(\.newValue) }
}
