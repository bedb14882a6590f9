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

extension EventLog {
    /// The values `key` took, event by event.
    func values(of key: String) -> [DefaultsValue?] { all.filter { $0.key == key }.map(\.newValue) }
}
