/// Converts one tree of arrays and dictionaries into another without recursion: an explicit
/// stack instead of the call stack, so that a value at the maximum nesting depth converts on a
/// thread with a small stack (512 KiB), where one call per level of a recursive conversion
/// overflows it.
struct TreeConversion<Source, Target> {
    /// What one source node is.
    enum Shape {
        /// A scalar, already converted.
        case leaf(Target)
        case array([Source])
        case dictionary([(key: String, value: Source)])
        /// The whole conversion fails (a value the target cannot hold).
        case fail
    }

    private enum Task {
        case visit(Source)
        case makeArray(count: Int)
        case makeDictionary(keys: [String])
    }

    /// The converted tree, or `nil` if a node's shape is ``Shape/fail``.
    mutating func run(
        _ root: Source, shape: (Source) -> Shape, array: ([Target]) -> Target, dictionary: ([String: Target]) -> Target
    ) -> Target? {
        var tasks: [Task] = [.visit(root)]
        var done: [Target] = []
        while let task = tasks.popLast() {
            switch task {
            case .visit(let node):
                switch shape(node) {
                case .leaf(let target):
                    done.append(target)
                case .array(let items):
                    tasks.append(.makeArray(count: items.count))
                    tasks.append(contentsOf: items.reversed().lazy.map { .visit($0) })
                case .dictionary(let entries):
                    tasks.append(.makeDictionary(keys: entries.map(\.key)))
                    tasks.append(contentsOf: entries.reversed().lazy.map { .visit($0.value) })
                case .fail:
                    return nil
                }
            case .makeArray(let count):
                let items = Array(done.suffix(count))
                done.removeLast(count)
                done.append(array(items))
            case .makeDictionary(let keys):
                var items: [String: Target] = [:]
                items.reserveCapacity(keys.count)
                for (key, item) in zip(keys, done.suffix(keys.count)) { items[key] = item }
                done.removeLast(keys.count)
                done.append(dictionary(items))
            }
        }
        return done.last
    }
}
