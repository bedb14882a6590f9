import Foundation

import AnyDefaultsPlatform

extension StoreConfiguration {
    /// The environment variable that names the store: `ANYDEFAULTS_STORE=sqlite:~/prefs.sqlite`.
    public static let storeVariable = "ANYDEFAULTS_STORE"
    /// The environment variable that names a JSON configuration file: `ANYDEFAULTS_CONFIG=/etc/app/defaults.json`.
    public static let fileVariable = "ANYDEFAULTS_CONFIG"

    /// Finds the store configuration, the first of:
    /// 1. `explicit` (a store string, for example from a command-line flag);
    /// 2. the `ANYDEFAULTS_STORE` environment variable;
    /// 3. the JSON file `file`, else the file named by `ANYDEFAULTS_CONFIG`.
    ///
    /// Returns `nil` when none is set, so the caller applies its own default. An empty variable
    /// counts as unset. A set but invalid source is an error; it does not fall through to the next.
    ///
    /// ```swift
    /// let configuration = try StoreConfiguration.resolve(explicit: options.store)
    ///     ?? StoreConfiguration(scheme: "sqlite", location: "~/.local/share/app/defaults.sqlite")
    /// ```
    public static func resolve(
        explicit: String? = nil,
        file: String? = nil,
        environment: [String: String] = ProcessInfo.processInfo.environment
    ) throws(DefaultsError) -> StoreConfiguration? {
        if let explicit { return try StoreConfiguration(parsing: explicit) }
        if let text = environment[storeVariable], !text.trimmingCharacters(in: .whitespaces).isEmpty {
            do {
                return try StoreConfiguration(parsing: text)
            } catch {
                throw Self.error("In \(storeVariable): \(error.message)")
            }
        }
        if let path = file ?? environment[fileVariable].flatMap({ $0.isEmpty ? nil : $0 }) {
            return try StoreConfiguration(contentsOfFile: path)
        }
        return nil
    }

    /// Reads a configuration from a JSON file, in either form:
    ///
    /// ```json
    /// { "store": "sqlite:prefs.sqlite?durability=full" }
    /// { "scheme": "sqlite", "location": "prefs.sqlite", "cache": true, "options": { "durability": "full" } }
    /// ```
    ///
    /// A relative path in the file is resolved against the file's directory.
    public init(contentsOfFile path: String) throws(DefaultsError) {
        let url = URL(fileURLWithPath: path)
        let base = url.deletingLastPathComponent().path
        let data: Data
        do {
            // Never blocking, regular files only: a FIFO named by ANYDEFAULTS_CONFIG must not hang.
            guard let (bytes, _) = try FileContents.read(path, maximumSize: 1 << 20) else {
                throw SystemCallError(call: "open", path: path, number: ENOENT)
            }
            data = Data(bytes)
        } catch {
            throw Self.error("The configuration file cannot be read.", path: path, cause: error)
        }
        let object: Any
        do {
            object = try JSONSerialization.jsonObject(with: data)
        } catch {
            throw Self.error("The configuration file is not valid JSON.", path: path, cause: error)
        }
        let forms = #"Write {"store": "SCHEME:LOCATION?OPTIONS"} or {"scheme": ..., "location": ..., "cache": true, "options": {...}}."#
        guard let fields = object as? [String: Any] else {
            throw Self.error("The configuration file does not hold a JSON object. \(forms)", path: path)
        }
        let known: Set<String> = ["store", "scheme", "location", "cache", "options"]
        if let unknown = fields.keys.sorted().first(where: { !known.contains($0) }) {
            throw Self.error("The configuration file has an unknown field \"\(unknown)\". \(forms)", path: path)
        }
        if let store = fields["store"] {
            guard fields.count == 1, let text = store as? String else {
                throw Self.error("\"store\" must be a string and stand alone. \(forms)", path: path)
            }
            do {
                self = try StoreConfiguration(parsing: text, baseDirectory: base)
            } catch {
                throw Self.error(error.message, path: path)
            }
            return
        }
        guard let scheme = fields["scheme"] as? String else {
            throw Self.error("The configuration file names no \"scheme\" (or \"store\"). \(forms)", path: path)
        }
        guard let location = fields["location"] as? String ?? (fields["location"] == nil ? "" : nil) else {
            throw Self.error("\"location\" must be a string.", path: path)
        }
        var cache = true
        switch fields["cache"] {
        case nil: break
        case let flag as Bool: cache = flag
        case let text as String: cache = try Self.parseOnOff(text, option: "cache")
        default: throw Self.error("\"cache\" must be true, false, \"on\" or \"off\".", path: path)
        }
        var options: [String: String] = [:]
        if let raw = fields["options"] {
            guard let dictionary = raw as? [String: Any] else {
                throw Self.error("\"options\" must be an object of names to values.", path: path)
            }
            for (name, value) in dictionary {
                switch value {
                case let text as String: options[name.lowercased()] = text
                case let number as NSNumber: options[name.lowercased()] = number.stringValue
                default: throw Self.error("The option \"\(name)\" must be a string, a number or a boolean.", path: path)
                }
            }
        }
        self.init(scheme: scheme, location: location, options: options, cache: cache, baseDirectory: base)
    }
}
