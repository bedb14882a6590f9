import Foundation

import AnyDefaultsPlatform

/// What a path names on disk, as the kernel sees it, whatever the spelling: a hard link, a
/// symbolic link, a bind mount, `..`, a relative path or (on Apple platforms) another case of the
/// same name all give one identity.
///
/// An existing file is identified by its device and inode. A file not there yet (a store not
/// written to, a journal not created) is identified by its directory's device and inode and its
/// name, so that two spellings of a file that does not exist yet are still recognized as one.
///
/// ```swift
/// FileIdentity(path: "/var/lib/app/prefs.json") == FileIdentity(path: "/srv/bind-mount/prefs.json")
/// ```
package struct FileIdentity: Hashable, Sendable, CustomStringConvertible {
    private enum Kind: Hashable {
        case file(device: UInt64, inode: UInt64)
        case entry(device: UInt64, inode: UInt64, name: [UInt8])
    }

    private let kind: Kind

    /// The identity of the file a write to `path` would write: symbolic links are followed (a
    /// dangling one to where its target would be created), as ``FileReplacement/target(of:)``
    /// does. `nil` when neither the file nor its directory exists.
    package init?(path: String) {
        guard !path.isEmpty, let target = try? FileReplacement.followingLinks(path) else { return nil }
        var info = stat()
        if stat(target, &info) == 0 {
            kind = .file(device: info.fileID.device, inode: info.fileID.inode)
            return
        }
        guard errno == ENOENT, stat(FileReplacement.directory(of: target), &info) == 0 else { return nil }
        kind = .entry(
            device: info.fileID.device, inode: info.fileID.inode,
            name: Self.comparable(FileReplacement.name(of: target)))
    }

    package var description: String {
        switch kind {
        case .file(let device, let inode): "file \(device):\(inode)"
        case .entry(let device, let inode, let name): "entry \(String(decoding: name, as: UTF8.self)) in \(device):\(inode)"
        }
    }

    /// The bytes by which a name not yet on disk is compared. Apple file systems are usually
    /// case-insensitive and normalization-insensitive, so there the name is folded (a false
    /// match refuses a write, which is the safe side); elsewhere names are bytes.
    private static func comparable(_ name: String) -> [UInt8] {
        #if canImport(Darwin)
        Array(name.precomposedStringWithCanonicalMapping.lowercased().utf8)
        #else
        Array(name.utf8)
        #endif
    }
}
