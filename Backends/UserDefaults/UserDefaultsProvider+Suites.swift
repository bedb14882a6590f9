import AnyDefaultsCore
import Foundation

extension UserDefaultsProvider {
    /// The suites that hold settings for the current user, sorted: what `defaults domains` lists
    /// on macOS. On Linux, the property lists in Foundation's preferences directory
    /// (`$XDG_CONFIG_HOME`, else `~/.config`), the standard suites of programs included (named
    /// after their bundle identifier or process name); `nil` on Apple platforms, where `cfprefsd`
    /// keeps the suites and offers no list of them.
    ///
    /// ```swift
    /// for suite in try UserDefaultsProvider.suiteNames() ?? [] { print(suite) }
    /// ```
    public static func suiteNames() throws(DefaultsError) -> [String]? {
        #if canImport(Darwin)
        return nil
        #else
        let directory = PreferencesLocation.directory
        let names: [String]
        do {
            names = try FileManager.default.contentsOfDirectory(atPath: directory)
        } catch let error as NSError where error.domain == NSCocoaErrorDomain && error.code == NSFileReadNoSuchFileError {
            return []
        } catch {
            throw DefaultsError(.ioFailure, "The preferences directory cannot be listed.", backend: backend, path: directory, cause: error)
        }
        // A temporary file of a write in progress starts with a dot; a name that is not a suite
        // of its own (NSGlobalDomain…) is not listed.
        return names.compactMap { name -> String? in
            guard name.hasSuffix(".plist"), !name.hasPrefix(".") else { return nil }
            let suite = String(name.dropLast(".plist".count))
            return (try? validate(suiteName: suite)) == nil ? nil : suite
        }
        .sorted()
        #endif
    }
}
