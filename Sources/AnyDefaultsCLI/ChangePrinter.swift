import AnyDefaults

/// Prints changes as `watch` shows them, keeping the values it has shown (to report what differs
/// when the store is opened again) and the count.
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

    mutating func show(removalOf keys: [String]) throws(CommandFailure) -> Bool {
        try show(keys.map { DefaultsChangeEvent(key: $0, newValue: nil, origin: .external) })
    }

    /// The events that take what was shown to `values`, keys in sorted order.
    func differences(to values: [String: DefaultsValue]) -> [DefaultsChangeEvent] {
        Set(known.keys).union(values.keys).sorted().compactMap { key in
            known[key] == values[key] ? nil : DefaultsChangeEvent(key: key, newValue: values[key], origin: .external)
        }
    }
}
