import AnyDefaults
import ArgumentParser

/// `anydefaults`: read and write defaults in any store, like macOS `defaults`.
@main
struct AnyDefaultsCommand: AsyncParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "anydefaults",
        abstract: "Read, write, export and watch settings in any AnyDefaults store.",
        discussion: """
            The store is named by --store, else by ANYDEFAULTS_STORE, else it is the SQLite store \
            $XDG_DATA_HOME/anydefaults/defaults.sqlite (~/.local/share/anydefaults/defaults.sqlite).
            Store strings: memory:, json:PATH, sqlite:PATH, lmdb:DIR, userdefaults:[SUITE], with options \
            after '?', e.g. sqlite:~/prefs.sqlite?durability=full&cache=off.

            Exit status: 0 success; 1 key not found; 64 usage or configuration error; 65 bad input \
            data (a value or an import file); 66 input file missing; 74 store I/O failure or \
            corruption; 75 store busy; 77 permission denied; 70 anything else.
            """,
        subcommands: [
            ReadCommand.self, WriteCommand.self, DeleteCommand.self, KeysCommand.self,
            ExportCommand.self, ImportCommand.self, MigrateCommand.self, WatchCommand.self,
            BenchCommand.self, VerifyCommand.self, TourCommand.self,
        ]
    )
}
