import AnyDefaults
import ArgumentParser

struct TourCommand: ParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "tour",
        abstract: "A short guided run over every backend, in scratch storage removed afterwards.",
        discussion: """
            Chooses each backend by configuration, writes and reads the same settings on each, \
            shows the cache's statistics, a change made by another process, a move between \
            backends, and a quick comparison table. Takes a few seconds; ./scripts/tour runs it \
            from a fresh clone.
            """)

    func run() throws {
        try reportingErrors {
            let scratch = try ScratchArea(purpose: "tour")
            defer { scratch.remove() }
            try Tour(scratch: scratch).run()
        }
    }
}
