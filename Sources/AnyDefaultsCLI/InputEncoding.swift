import AnyDefaultsPlatform

/// The check that the command line and the environment variables the tool reads are valid UTF-8.
///
/// Swift decodes both with U+FFFD in place of bytes that are not UTF-8, so a path would name
/// another file and two keys could become one. The raw bytes are checked before anything is
/// parsed, and an argument or variable that is not UTF-8 is refused (status 64) without quoting
/// it (it may be a value, and values may be secrets).
enum InputEncoding {
    /// The environment variables the tool and its backends read: the store, the configuration
    /// file, the data and preferences directories, the home directory (for `~`), the scratch
    /// directory.
    static let variables = ["ANYDEFAULTS_STORE", "ANYDEFAULTS_CONFIG", "XDG_DATA_HOME", "XDG_CONFIG_HOME", "HOME", "TMPDIR"]

    /// What is not valid UTF-8, as a message, or `nil` when everything is.
    static func problem() -> String? {
        for index in 1..<Int(CommandLine.argc) {
            guard let argument = CommandLine.unsafeArgv[index], String(validatingCString: argument) == nil else { continue }
            return "argument \(index) is not valid UTF-8: paths, keys and values must be UTF-8 text"
        }
        for name in variables {
            guard let value = getenv(name), String(validatingCString: value) == nil else { continue }
            return "the environment variable \(name) is not valid UTF-8: paths must be UTF-8 text"
        }
        return nil
    }
}
