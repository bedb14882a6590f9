import AnyDefaults
import Foundation
import TestSupport
import Testing

/// One rule for links, owners and modes on every file the tool writes: a JSON store, a
/// UserDefaults suite file, an export. Links are written through (a dangling one's target is
/// created, the link stays a link); a link planted by another user in a sticky, world-writable
/// directory is not followed; a file written as root keeps its owner and mode.
@Suite(.ownThreads) struct LinkAndOwnershipTests {
    /// A file the tool writes, and the command that writes it.
    struct Target: Sendable, CustomTestStringConvertible {
        var name: String
        /// The path the command writes, given the sandbox.
        var path: @Sendable (CLI) -> String
        /// The arguments that write the path.
        var write: @Sendable (CLI, String) -> [String]

        var testDescription: String { name }

        /// A file of `values` this target can read.
        func content(_ values: [String: DefaultsValue]) -> Data {
            name == "a UserDefaults suite file" ? ExactPropertyList.data(from: values) : ExactJSON.data(from: values)
        }

        static let all: [Target] = [
            Target(name: "a JSON store", path: { $0.path("store.json") }) { _, path in ["--store", "json:" + path, "write", "k", "v"] },
            Target(name: "a UserDefaults suite file", path: { $0.path("config/com.example.links.plist") }) { _, _ in
                ["--store", "userdefaults:com.example.links", "write", "k", "v"]
            },
            Target(name: "an export", path: { $0.path("export.json") }) { _, path in
                ["--store", "memory:", "export", "--output", path]
            },
        ]
    }

    private static func isLink(_ path: String) -> Bool {
        (try? FileManager.default.destinationOfSymbolicLink(atPath: path)) != nil
    }

    @Test(arguments: Target.all)
    func aLinkIsWrittenThroughAndStaysALink(_ target: Target) throws {
        try withTemporaryDirectory { directory in
            let cli = try CLI(directory)
            let path = target.path(cli)
            // An existing target.
            try FileManager.default.createDirectory(atPath: (path as NSString).deletingLastPathComponent, withIntermediateDirectories: true)
            let initial = target.content(["old": .int(1)])
            try initial.write(to: URL(fileURLWithPath: cli.path("existing-target")))
            try FileManager.default.createSymbolicLink(atPath: path, withDestinationPath: cli.path("existing-target"))
            try cli.succeed(target.write(cli, path))
            #expect(Self.isLink(path))
            #expect(FileManager.default.contents(atPath: cli.path("existing-target")) != initial)

            // A dangling link, through a chain of relative links: the final target is created.
            try FileManager.default.removeItem(atPath: path)
            try FileManager.default.createSymbolicLink(atPath: path, withDestinationPath: cli.path("hop"))
            try FileManager.default.createSymbolicLink(atPath: cli.path("hop"), withDestinationPath: "new-target")
            try cli.succeed(target.write(cli, path))
            #expect(Self.isLink(path) && Self.isLink(cli.path("hop")))
            let created = try FileManager.default.attributesOfItem(atPath: cli.path("new-target"))
            #expect(created[.type] as? FileAttributeType == .typeRegular)
            #expect((created[.posixPermissions] as? NSNumber)?.intValue == 0o600)

            // A link into a directory that does not exist: refused, the link left as it is.
            try FileManager.default.removeItem(atPath: path)
            try FileManager.default.createSymbolicLink(atPath: path, withDestinationPath: "/nonexistent-\(UUID().uuidString)/x")
            if target.name != "a JSON store" {  // A JSON store creates its directories (when allowed).
                let result = try cli.run(target.write(cli, path))
                #expect(result.status != 0, "\(result.standardError)")
                #expect(Self.isLink(path))
            }
        }
    }

    /// Linux's `protected_symlinks` rule, applied by the library itself: in a sticky,
    /// world-writable directory, a link owned by another user (not the directory's owner) is not
    /// followed; one owned by the writer or by the directory's owner is.
    @Test(.enabled(if: geteuid() == 0, "needs root to own files as another user"), arguments: Target.all)
    func aLinkPlantedByAnotherUserInASharedDirectoryIsNotFollowed(_ target: Target) throws {
        try withTemporaryDirectory { directory in
            let cli = try CLI(directory)
            let path = target.path(cli)
            let shared = cli.path("shared")
            try FileManager.default.createDirectory(atPath: shared, withIntermediateDirectories: true)
            #expect(chmod(shared, 0o1777) == 0)
            let victim = cli.path("victim")
            let precious = target.content(["precious": .int(1)])
            try precious.write(to: URL(fileURLWithPath: victim))
            // The written path is itself a link into the shared directory, whose link was
            // planted there by user 65534 and points at the victim.
            try FileManager.default.createSymbolicLink(atPath: shared + "/planted", withDestinationPath: victim)
            #expect(lchown(shared + "/planted", 65534, 65534) == 0)
            try FileManager.default.createDirectory(atPath: (path as NSString).deletingLastPathComponent, withIntermediateDirectories: true)
            try FileManager.default.createSymbolicLink(atPath: path, withDestinationPath: shared + "/planted")
            let result = try cli.run(target.write(cli, path))
            #expect(result.status == 77, "\(result.standardError)")
            #expect(result.standardError.contains("shared"), "\(result.standardError)")
            #expect(FileManager.default.contents(atPath: victim) == precious)
            #expect(Self.isLink(shared + "/planted"))

            // Owned by the directory's owner: followed.
            #expect(chown(shared, 65534, 65534) == 0)
            try cli.succeed(target.write(cli, path))
            #expect(FileManager.default.contents(atPath: victim) != precious)
            #expect(Self.isLink(shared + "/planted"))
        }
    }

    /// A write as root into a file of another user keeps that file's owner, group and mode.
    @Test(.enabled(if: geteuid() == 0, "needs root to write another user's file"), arguments: Target.all)
    func aWriteAsRootKeepsTheOwnerAndMode(_ target: Target) throws {
        try withTemporaryDirectory { directory in
            let cli = try CLI(directory)
            let path = target.path(cli)
            try FileManager.default.createDirectory(atPath: (path as NSString).deletingLastPathComponent, withIntermediateDirectories: true)
            let initial = target.content(["old": .int(1)])
            try initial.write(to: URL(fileURLWithPath: path))
            #expect(chown(path, 1234, 5678) == 0)
            #expect(chmod(path, 0o640) == 0)
            try cli.succeed(target.write(cli, path))
            var info = stat()
            #expect(stat(path, &info) == 0)
            #expect(info.st_uid == 1234 && info.st_gid == 5678, "owner \(info.st_uid):\(info.st_gid)")
            #expect(info.st_mode & 0o7777 == 0o640, "mode \(String(info.st_mode & 0o7777, radix: 8))")
            #expect(FileManager.default.contents(atPath: path) != initial)
        }
    }

    /// A new export is readable by its owner only, like the stores it comes from.
    @Test func aNewExportIsOwnerOnly() throws {
        try withTemporaryDirectory { directory in
            let cli = try CLI(directory)
            try cli.succeed(["--store", "memory:", "export", "--output", cli.path("new.json")])
            let attributes = try FileManager.default.attributesOfItem(atPath: cli.path("new.json"))
            #expect((attributes[.posixPermissions] as? NSNumber)?.intValue == 0o600)
        }
    }
}
