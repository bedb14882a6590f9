import AnyDefaults
import ArgumentParser
import Foundation

/// `anydefaults`: read and write defaults in any store, like macOS `defaults`.
@main
struct AnyDefaultsCommand: AsyncParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "anydefaults",
        abstract: "Read, write, export and watch settings in any AnyDefaults store.",
        discussion: """
            The store is named by --store, else by ANYDEFAULTS_STORE, else by the JSON file \
            ANYDEFAULTS_CONFIG names, else it is the tool's own SQLite store \
            $XDG_DATA_HOME/anydefaults/defaults.sqlite (~/.local/share/anydefaults/defaults.sqlite).
            An app's Defaults.standard keeps its settings elsewhere: in ANYDEFAULTS_STORE or the \
            configuration file when the app runs with them, else in its UserDefaults suite \
            (userdefaults:NAME; on Linux the file $XDG_CONFIG_HOME/NAME.plist, \
            ~/.config/NAME.plist; on Apple platforms the app's preferences domain), NAME being \
            the app's bundle identifier or, without one, its process name. --app NAME opens that \
            store.
            Store strings: memory:, json:PATH, sqlite:PATH, lmdb:DIR, userdefaults:[SUITE], with \
            options after '?', e.g. sqlite:~/prefs.sqlite?durability=full&cache=off.

            \(ExitStatus.summary)
            """,
        subcommands: [
            ReadCommand.self, ReadTypeCommand.self, WriteCommand.self, DeleteCommand.self, KeysCommand.self,
            ExportCommand.self, ImportCommand.self, MigrateCommand.self, WatchCommand.self, DomainsCommand.self,
            BenchCommand.self, VerifyCommand.self, TourCommand.self,
        ]
    )

    // Declared here too so that `anydefaults --store S COMMAND` works.
    @OptionGroup var store: StoreOptions

    /// Runs the command as ArgumentParser would, between the checks every command shares: signal
    /// handling first (``Interrupts``), a command line and environment that are valid UTF-8
    /// (``InputEncoding``), and at the end a standard output that was written and closed
    /// without error (``Console/finish()``).
    static func main() async {
        Interrupts.install()
        if let problem = InputEncoding.problem() {
            Console.error(problem)
            Foundation.exit(ExitStatus.usage)
        }
        do {
            var command = try parseAsRoot()
            if var command = command as? AsyncParsableCommand {
                try await command.run()
            } else {
                try command.run()
            }
            try Console.finish()
        } catch let failure as CommandFailure {
            Console.error(failure.message)
            Foundation.exit(failure.status)
        } catch {
            exit(withError: error)
        }
    }
}
