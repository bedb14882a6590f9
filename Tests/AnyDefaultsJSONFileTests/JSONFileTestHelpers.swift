@testable import AnyDefaultsJSONFile
import AnyDefaultsCore
import Foundation
import Synchronization
import Testing

/// Reads facts about files for the tests.
enum FileFacts {
    static func text(_ path: String) throws -> String {
        String(decoding: try Data(contentsOf: URL(fileURLWithPath: path)), as: UTF8.self)
    }

    static func bytes(_ path: String) throws -> Data {
        try Data(contentsOf: URL(fileURLWithPath: path))
    }

    /// Inode, size and modification time: changes whenever the file is rewritten.
    static func identity(_ path: String) throws -> FileStamp? {
        try AtomicFile.stamp(path)
    }

    static func permissions(_ path: String) throws -> Int {
        let attributes = try FileManager.default.attributesOfItem(atPath: path)
        return (attributes[.posixPermissions] as? NSNumber)?.intValue ?? -1
    }

    static func names(in directory: String) throws -> [String] {
        try FileManager.default.contentsOfDirectory(atPath: directory).sorted()
    }

    /// The generation counter in the lock file: how many writes went through the provider.
    static func generation(_ path: String) -> UInt64 {
        LockFile(path: path + ".lock").generation()
    }

    static func write(_ text: String, to path: String) throws {
        try Data(text.utf8).write(to: URL(fileURLWithPath: path), options: .atomic)
    }
}

/// Runs `body` and returns the `DefaultsError` it throws, recording an issue if it throws none.
func defaultsError(_ body: () throws -> Void, sourceLocation: SourceLocation = #_sourceLocation) -> DefaultsError? {
    do {
        try body()
        Issue.record("expected a DefaultsError", sourceLocation: sourceLocation)
    } catch let error as DefaultsError {
        return error
    } catch {
        Issue.record("expected a DefaultsError, got \(error)", sourceLocation: sourceLocation)
    }
    return nil
}
