import Foundation

/// Which store to open, parsed from one string such as `sqlite:~/prefs.sqlite?durability=full`.
///
/// The form is `SCHEME:LOCATION[?NAME=VALUE&...]`. The scheme names the backend (`memory`, `json`,
/// `sqlite`, `lmdb`, `userdefaults`, or one you register); the location is a path or a name; the
/// options are the backend's own plus `cache=on|off` (default `on`) and, for a store kept in a
/// file, `journal=on|off` (default `off`; see ``JournaledProvider``). `%XX` escapes are decoded in
/// the location and the options (write `%3F` for a `?` in a path, `%25` for a `%`); `SCHEME:///path`
/// is accepted for `SCHEME:/path`. A store on a server names it after two slashes,
/// `SCHEME://AUTHORITY/PATH` (`postgres://app@db.example.com:5432/settings`): the authority is
/// kept as written in ``authority`` and the path is the location; only backends registered with a
/// ``ProviderRegistry/Location/server(_:)`` location accept one.
///
/// ```swift
/// let configuration = try StoreConfiguration(parsing: "lmdb:/var/lib/app/settings?mapsize=64MiB")
/// configuration.scheme        // "lmdb"
/// configuration.options       // ["mapsize": "64MiB"]
/// ```
public struct StoreConfiguration: Sendable, Hashable, CustomStringConvertible {
    /// The backend's scheme, lower-cased.
    public var scheme: String
    /// The path or name after the colon, decoded; empty when there is none.
    public var location: String
    /// The backend's own options, by name, decoded. `cache` is not among them.
    public var options: [String: String]
    /// Whether the provider is wrapped in a cache (`cache=on`, the default).
    public var cache: Bool
    /// The directory a relative path is resolved against: `nil` for the current directory, or the
    /// directory of the configuration file the string came from.
    public var baseDirectory: String?
    /// For a store on a server (`SCHEME://AUTHORITY/PATH`): the text between `//` and the next `/`,
    /// `?` or the end, as written (percent escapes kept, for the backend to decode part by part),
    /// such as `app@db.example.com:5432`. `nil` for local stores.
    public var authority: String?

    static let component = "Configuration"

    /// Creates a configuration from its parts.
    public init(
        scheme: String, location: String = "", options: [String: String] = [:], cache: Bool = true, baseDirectory: String? = nil,
        authority: String? = nil
    ) {
        self.scheme = scheme.lowercased()
        self.location = location
        self.options = options
        self.cache = cache
        self.baseDirectory = baseDirectory
        self.authority = authority
    }

    /// Parses a store string.
    ///
    /// - Throws: ``DefaultsError/Code-swift.struct/invalidConfiguration`` saying what is wrong and
    ///   what the form is.
    public init(parsing text: String, baseDirectory: String? = nil) throws(DefaultsError) {
        let text = text.trimmingCharacters(in: .whitespacesAndNewlines)
        let form = "The form is SCHEME:LOCATION[?NAME=VALUE&...], for example memory:, json:prefs.json, sqlite:~/prefs.sqlite?durability=full."
        guard !text.isEmpty else {
            throw Self.error("The store string is empty. \(form)")
        }
        guard let colon = text.firstIndex(of: ":") else {
            throw Self.error("\"\(text)\" names no scheme. \(form)")
        }
        let scheme = String(text[..<colon]).lowercased()
        guard let first = scheme.unicodeScalars.first, ("a"..."z").contains(first),
            scheme.unicodeScalars.allSatisfy({ ("a"..."z").contains($0) || ("0"..."9").contains($0) || "+-.".unicodeScalars.contains($0) })
        else {
            throw Self.error("\"\(scheme)\" is not a valid scheme: it starts with a letter and holds only letters, digits, +, - and '.'. \(form)")
        }
        var rest = text[text.index(after: colon)...]
        var authority: String?
        if rest.hasPrefix("///") {
            rest = rest.dropFirst(2)
        } else if rest.hasPrefix("//") {
            // A server: whether the scheme takes one is the registry's to check.
            let server = rest.dropFirst(2)
            let end = server.firstIndex { $0 == "/" || $0 == "?" } ?? server.endIndex
            authority = String(server[..<end])
            rest = server[end...]
        }
        let query: Substring?
        if let mark = rest.firstIndex(of: "?") {
            query = rest[rest.index(after: mark)...]
            rest = rest[..<mark]
        } else {
            query = nil
        }
        let location = try Self.decode(String(rest), what: "the location")

        var options: [String: String] = [:]
        var cache: Bool?
        for item in (query ?? "").split(separator: "&", omittingEmptySubsequences: true) {
            let parts = item.split(separator: "=", maxSplits: 1, omittingEmptySubsequences: false)
            let name = try Self.decode(String(parts[0]), what: "an option name").lowercased()
            guard parts.count == 2, !name.isEmpty else {
                throw Self.error("The option \"\(item)\" has no value; write NAME=VALUE.")
            }
            let value = try Self.decode(String(parts[1]), what: "the value of \(name)")
            guard options[name] == nil, name != "cache" || cache == nil else {
                throw Self.error("The option \"\(name)\" is given twice.")
            }
            if name == "cache" {
                cache = try Self.parseOnOff(value, option: "cache")
                continue
            }
            options[name] = value
        }
        self.init(scheme: scheme, location: location, options: options, cache: cache ?? true, baseDirectory: baseDirectory, authority: authority)
    }

    /// The canonical string of this configuration; parsing it gives this configuration back.
    public var description: String {
        let allowed = CharacterSet.urlPathAllowed.subtracting(CharacterSet(charactersIn: "?%"))
        let valueAllowed = CharacterSet.urlQueryAllowed.subtracting(CharacterSet(charactersIn: "&=?%+"))
        var path = location.addingPercentEncoding(withAllowedCharacters: allowed) ?? location
        var text = "\(scheme):"
        if let authority {
            text += "//" + authority + (path.isEmpty || path.hasPrefix("/") ? "" : "/")
        } else if path.hasPrefix("//") {
            // A location that starts with "//" would read back as a host (or, with "///", lose a slash).
            path = "%2F" + path.dropFirst()
        }
        text += path
        // Names are escaped too: a name holding "&" or "=" would otherwise split differently.
        var items = options.sorted { $0.key < $1.key }.map {
            "\($0.key.addingPercentEncoding(withAllowedCharacters: valueAllowed) ?? $0.key)="
                + "\($0.value.addingPercentEncoding(withAllowedCharacters: valueAllowed) ?? $0.value)"
        }
        if !cache { items.append("cache=off") }
        if !items.isEmpty { text += "?" + items.joined(separator: "&") }
        return text
    }

    /// The location as an absolute file path: `~` and `~/…` become the home directory, and a
    /// relative path is resolved against ``baseDirectory`` (or the current directory).
    public var resolvedPath: String {
        var path = location
        if path == "~" || path.hasPrefix("~/") {
            path = Self.homeDirectory + path.dropFirst()
        }
        if !path.hasPrefix("/") {
            let base = baseDirectory ?? FileManager.default.currentDirectoryPath
            path = base + (base.hasSuffix("/") ? "" : "/") + path
        }
        return URL(fileURLWithPath: path).standardizedFileURL.path
    }

    /// `$HOME`, else the user's home directory (an app's container on iOS, tvOS, watchOS and
    /// visionOS, where `FileManager.homeDirectoryForCurrentUser` does not exist).
    package static var homeDirectory: String {
        if let home = ProcessInfo.processInfo.environment["HOME"], !home.isEmpty { return home }
        return NSHomeDirectory()
    }

    static func error(_ message: String, path: String? = nil, cause: (any Error)? = nil) -> DefaultsError {
        DefaultsError(.invalidConfiguration, message, backend: component, path: path, cause: cause)
    }

    private static func decode(_ text: String, what: String) throws(DefaultsError) -> String {
        guard text.contains("%") else { return text }
        guard let decoded = text.removingPercentEncoding else {
            throw error("\(what.prefix(1).uppercased() + what.dropFirst()) \"\(text)\" has a % that is not followed by two hex digits (write %25 for %).")
        }
        return decoded
    }

    /// Parses an on/off option value (`on`, `off`, `true`, `false`, `yes`, `no`, `1`, `0`).
    public static func parseOnOff(_ value: String, option: String) throws(DefaultsError) -> Bool {
        switch value.lowercased() {
        case "on", "true", "yes", "1": return true
        case "off", "false", "no", "0": return false
        default: throw error("The option \(option)=\(value) is not accepted; use on or off (true/false, yes/no, 1/0).")
        }
    }
}
