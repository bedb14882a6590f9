import AnyDefaults
import Foundation

/// A status line on standard error for long jobs (import, migrate, bench), redrawn in place.
/// It shows only when standard error is a terminal, so piped or redirected runs stay quiet.
final class ProgressLine {
    private let enabled: Bool
    private let label: String
    private var lastDraw: ContinuousClock.Instant?
    private var visible = false

    /// A progress line prefixed with `label`; `enabled` defaults to whether standard error is a
    /// terminal.
    init(_ label: String, enabled: Bool = Console.standardErrorIsTerminal) {
        self.label = label
        self.enabled = enabled
    }

    /// Shows `status`, at most ten times a second unless `force` is set.
    func show(_ status: String, force: Bool = true) {
        guard enabled else { return }
        let now = ContinuousClock.now
        if !force, let lastDraw, now - lastDraw < .milliseconds(100) { return }
        lastDraw = now
        visible = true
        // Carriage return and "erase line", so each status replaces the last; the status names
        // stores and files, whose control characters must not reach the terminal.
        try? FileHandle.standardError.write(contentsOf: Data("\r\u{1B}[2K\(label): \(DefaultsError.printable(status))".utf8))
    }

    /// Erases the line, leaving the terminal as it was.
    func clear() {
        guard enabled, visible else { return }
        visible = false
        try? FileHandle.standardError.write(contentsOf: Data("\r\u{1B}[2K".utf8))
    }

    /// Replaces the line with `summary`, kept on screen (only on a terminal).
    func finish(_ summary: String) {
        guard enabled else { return }
        clear()
        Console.note(summary)
    }
}
