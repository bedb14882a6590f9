import Foundation
import Testing
import TestSupport

/// `scripts/portability-check`, which CI runs: it must pass on the package and fail on each kind
/// of violation planted in a scratch tree.
@Suite struct PortabilityCheckTests {
    private static let repository = URL(fileURLWithPath: #filePath).deletingLastPathComponent().deletingLastPathComponent()
        .deletingLastPathComponent()

    private func check(_ files: [String: String]) throws -> ChildProcess.Result {
        try withTemporaryDirectory { directory in
            for (name, text) in files {
                let url = directory.url.appendingPathComponent(name)
                try FileManager.default.createDirectory(at: url.deletingLastPathComponent(), withIntermediateDirectories: true)
                try text.write(to: url, atomically: true, encoding: .utf8)
            }
            return try ChildProcess.runSystem(
                "/bin/bash", [Self.repository.appendingPathComponent("scripts/portability-check").path, directory.path])
        }
    }

    @Test func thePackagePasses() throws {
        let result = try ChildProcess.runSystem(
            "/bin/bash", [Self.repository.appendingPathComponent("scripts/portability-check").path] + ["Sources", "Backends"].map {
                Self.repository.appendingPathComponent($0).path
            })
        #expect(result.status == 0, "\(result.standardOutput)\(result.standardError)")
    }

    @Test func portableCodePasses() throws {
        let result = try check([
            "A.swift": """
                import AnyDefaultsPlatform
                #if os(Linux)
                let fd = inotify_init1(0)
                #elseif canImport(Darwin)
                let seconds = info.st_mtimespec.tv_sec
                #else
                let unknown = 0
                #endif
                #if canImport(Darwin)
                let home = NSHomeDirectory()
                #else
                let seconds = info.st_mtim.tv_sec
                #endif
                // A comment may name inotify_init1 and /proc/self.
                """,
            "Sources/AnyDefaultsPlatform/Platform.swift": "#if canImport(Glibc)\n@_exported import Glibc\n#endif\n",
        ])
        #expect(result.status == 0, "\(result.standardOutput)\(result.standardError)")
    }

    @Test(arguments: [
        ("import Glibc\n", "imports a C library"),
        ("#if canImport(Darwin)\nimport Darwin\n#endif\n", "imports a C library"),
        ("@_exported import Musl\n", "imports a C library"),
        ("let fd = inotify_init1(0)\n", "inotify_"),  // portability-check: allowed, planted in a scratch tree
        ("#if os(Linux)\nlet a = 1\n#else\nlet fd = epoll_create1(0)\n#endif\n", "epoll_"),  // portability-check: allowed, planted in a scratch tree
        ("#if !os(Linux)\nlet t = info.st_mtim.tv_sec\n#endif\n", "st_mtim"),  // portability-check: allowed, planted in a scratch tree
        ("let path = \"/proc/self/fd\"\n", "/proc/"),  // portability-check: allowed, planted in a scratch tree
        ("let home = FileManager.default.homeDirectoryForCurrentUser\n", "homeDirectoryForCurrentUser"),  // portability-check: allowed, planted in a scratch tree
        ("let kind = Int32(SOCK_STREAM.rawValue)\n", "SOCK_STREAM.rawValue"),  // portability-check: allowed, planted in a scratch tree
    ])
    func aPlantedViolationFails(code: String, named: String) throws {
        let result = try check(["Clean.swift": "let x = 1\n", "Sub/Planted.swift": "import Foundation\n" + code])
        #expect(result.status == 1)
        #expect(result.standardOutput.contains("Planted.swift:"), "\(result.standardOutput)")
        #expect(result.standardOutput.contains(named), "\(result.standardOutput)")
        #expect(!result.standardOutput.contains("Clean.swift"))
    }
}
