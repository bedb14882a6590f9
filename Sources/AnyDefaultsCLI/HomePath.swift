import AnyDefaultsCore
import Foundation

/// `~` in a file argument, expanded as in a store string (and as a shell would, had it seen it):
/// `--output=~/prefs.json`, a quoted `"~/prefs.json"` or a path in a script reach the tool as
/// typed.
enum HomePath {
    /// `path` with a leading `~` or `~/` replaced by the home directory (`$HOME`, else the
    /// user's); any other path (`~user/x`, `./~`, `-`) as it is.
    static func expanded(_ path: String) -> String {
        guard path == "~" || path.hasPrefix("~/") else { return path }
        let home = StoreConfiguration.homeDirectory
        return (home.hasSuffix("/") && path.count > 1 ? String(home.dropLast()) : home) + path.dropFirst()
    }
}
