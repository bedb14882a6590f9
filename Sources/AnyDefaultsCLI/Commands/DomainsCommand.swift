import AnyDefaults
import ArgumentParser
import Foundation

struct DomainsCommand: ParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "domains",
        abstract: "List the UserDefaults suites of the current user, one per line.",
        discussion: """
            As macOS `defaults domains`: the suites that hold settings (on Linux the property \
            lists in $XDG_CONFIG_HOME, else ~/.config), each opened with --store \
            userdefaults:NAME, or with --app NAME for an app's standard suite. Only userdefaults: \
            has domains: any other store is one store of its own (a file, a directory, a \
            database), named by its store string, so --store with another scheme is an error \
            (64). On Apple platforms, where cfprefsd keeps the suites and offers no list, \
            domains says so (69).
            """)

    @OptionGroup var store: StoreOptions

    func run() throws {
        if let given = store.store, let scheme = try? StoreConfiguration(parsing: given).scheme, scheme != "userdefaults" {
            throw CommandFailure(
                ExitStatus.usage,
                "\(scheme): stores have no domains to list: each is one store, named by its store string. "
                    + "`anydefaults domains` lists the suites of userdefaults:.")
        }
        let suites = try reportingErrors { try UserDefaultsProvider.suiteNames() }
        guard let suites else {
            throw CommandFailure(
                ExitStatus.unavailable,
                "the suites of userdefaults: cannot be listed on this platform (cfprefsd keeps them); open one with --store userdefaults:NAME.")
        }
        try Console.write(suites.map { Console.listed($0) + "\n" }.joined())
    }
}
