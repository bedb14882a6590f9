// The conformance suite's child process for the deliberately broken providers of
// Tests/AnyDefaultsTestingTests: opens a BrokenFileProvider with the defect BROKEN_PROVIDER_DEFECT
// names on the group's storage directory, and serves the suite's requests.
import AnyDefaultsTesting
import BrokenProviders
import Foundation

let name = ProcessInfo.processInfo.environment[BrokenFileProvider.defectVariable] ?? ""
guard let defect = Defect(rawValue: name) else {
    FileHandle.standardError.write(Data("BrokenProviderTestChild: unknown defect \(name.debugDescription)\n".utf8))
    exit(64)
}
ConformanceChild.main { storage in try BrokenFileProvider(defect, directory: storage.directory) }
