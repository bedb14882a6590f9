import AnyDefaults

/// Prints changes as `watch` shows them, keeping the values it knows (so that a change reported
/// twice, by a provider following its replaced files, prints once) and the count.
struct ChangePrinter {
    let wanted: Set<String>
    let count: Int?
    var known: [String: DefaultsValue] = [:]
    private var printed = 0

    init(wanted: Set<String>, count: Int?) {
        (self.wanted, self.count) = (wanted, count)
    }

    /// Prints the wanted events (none that repeats a value already shown for its key), and says
    /// whether --count is reached.
    mutating func show(_ events: [DefaultsChangeEvent]) throws(CommandFailure) -> Bool {
        for event in events where known[event.key] != event.newValue {
            known[event.key] = event.newValue
            guard wanted.isEmpty || wanted.contains(event.key) else { continue }
            let shown = event.newValue.map { ExactJSON.string(from: $0, layout: .oneLine) } ?? "(removed)"
            try Console.write("\(Console.listed(event.key))\t\(shown)\n")
            printed += 1
            if let count, printed >= count { return true }
        }
        return false
    }
}
