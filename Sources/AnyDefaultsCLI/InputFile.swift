import Foundation

/// Reading a whole input file, or standard input for `-`.
enum InputFile {
    static func read(_ path: String) throws(CommandFailure) -> Data {
        if path == "-" {
            do {
                return try FileHandle.standardInput.readToEnd() ?? Data()
            } catch {
                throw CommandFailure.file("standard input", "read", error, status: ExitStatus.noInput)
            }
        }
        var isDirectory: ObjCBool = false
        guard FileManager.default.fileExists(atPath: path, isDirectory: &isDirectory) else {
            throw CommandFailure(ExitStatus.noInput, "cannot read \(path): no such file")
        }
        if isDirectory.boolValue {
            throw CommandFailure(ExitStatus.noInput, "cannot read \(path): it is a directory")
        }
        do {
            return try Data(contentsOf: URL(fileURLWithPath: path))
        } catch {
            let status = (error as NSError).code == CocoaError.fileReadNoPermission.rawValue ? ExitStatus.permissionDenied : ExitStatus.noInput
            throw CommandFailure.file(path, "read", error, status: status)
        }
    }
}
