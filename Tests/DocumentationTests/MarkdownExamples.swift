import Foundation

/// The Swift examples of a Markdown document, read mechanically so that no block escapes the
/// compiler.
///
/// Rules, for whoever writes a page:
/// - Every ` ```swift ` block is compiled.
/// - A block that shows `import` lines starts a new example; a block without imports continues the
///   example before it. An example is compiled as one file with exactly the imports its first
///   block shows, its blocks in the order of the page.
/// - `<!-- compile: aside -->` just before a block makes it an aside: compiled after the example
///   so far, with the imports it adds (its own, shown in it); the blocks after it continue the
///   example without the aside.
/// - `<!-- compile: with` … `-->` just before a block holds code the block relies on but the page
///   does not show (a provider type the reader writes, a path); it is compiled before the block,
///   with the imports it needs (it stands for the reader's own code). `<!-- compile: with module
///   MyStore` says that code stands for the reader's module `MyStore`: the example's
///   `import MyStore` is then left out, since the hidden code is compiled in the example's module.
/// - A block that is a package manifest (`// swift-tools-version`, or a fragment with `.package(`,
///   `.product(name:` or `.testTarget(`) is compiled against PackageDescription; a fragment inside the
///   array it belongs in.
struct MarkdownExample: Sendable, CustomStringConvertible {
    enum Kind: Sendable { case program, manifest }

    struct Block: Sendable {
        var line: Int
        var code: [String]
        var hidden: [String]
        /// The reader's modules that `hidden` stands for (their imports are left out).
        var hiddenModules: [String] = []
    }

    var document: String
    var kind: Kind
    var blocks: [Block]

    var description: String { "\(document):\(blocks[0].line)" }

    /// Whether the example declares tests (`@Test`, `@Suite`) and so is compiled as a library file,
    /// where the test macros' declarations are at file scope.
    var isLibrary: Bool {
        blocks.contains { block in block.code.contains { $0.hasPrefix("@Test") || $0.hasPrefix("@Suite") || $0.contains("XCTestCase") } }
    }

    /// The file the compiler reads: the imports of its blocks first, then each block under a
    /// `#sourceLocation` of its lines in the page (its imports blanked, so lines keep their
    /// numbers), so that a diagnostic names the Markdown line.
    func source(documentPath: String) -> String {
        if kind == .manifest { return Self.manifest(blocks[0].code).joined(separator: "\n") + "\n" }
        var imports: [String] = []
        var body: [String] = []
        let standIns = Set(blocks.flatMap(\.hiddenModules).map { "import \($0)" })
        /// `lines` with their imports taken out (blanked) and added to `imports`.
        func withoutImports(_ lines: [String]) -> [String] {
            lines.map { line in
                guard line.hasPrefix("import "), !standIns.contains(line) else { return standIns.contains(line) ? "" : line }
                if !imports.contains(line) { imports.append(line) }
                return ""
            }
        }
        for block in blocks {
            // Hidden code stands for the reader's own code (in their own module): its imports
            // are its own, not the page's.
            if !block.hidden.isEmpty { body += ["#sourceLocation(file: \"\(documentPath) (hidden)\", line: 1)"] + withoutImports(block.hidden) }
            body += ["#sourceLocation(file: \"\(documentPath)\", line: \(block.line + 1))"] + withoutImports(block.code)
        }
        return (imports + body).joined(separator: "\n") + "\n"
    }

    /// A whole manifest as it is, or a fragment inside the array it belongs in.
    static func manifest(_ code: [String]) -> [String] {
        if code.contains("import PackageDescription") { return code }
        let first = code.first { !$0.hasPrefix("//") && !$0.isEmpty }?.trimmingCharacters(in: .whitespaces) ?? ""
        let type =
            if first.hasPrefix(".package(") { "Package.Dependency" }
            else if first.hasPrefix(".testTarget(") || first.hasPrefix(".target(") || first.hasPrefix(".executableTarget(") { "Target" }
            else { "Target.Dependency" }
        return ["import PackageDescription", "let fragment: [\(type)] = ["] + code + ["]"]
    }

    static func isManifest(_ code: [String]) -> Bool {
        code.first?.hasPrefix("// swift-tools-version") == true
            || code.contains { line in [".package(", ".product(name:", ".testTarget("].contains { line.contains($0) } }
    }

    /// The examples of the document at `url`, named `name`, and how many Swift blocks it has.
    static func read(_ url: URL, name: String) throws -> (examples: [MarkdownExample], blockCount: Int) {
        let lines = try String(contentsOf: url, encoding: .utf8).split(separator: "\n", omittingEmptySubsequences: false).map(String.init)
        var examples: [MarkdownExample] = []
        var current: Int?          // index of the example that blocks without imports continue
        var blockCount = 0
        var directives: [String] = []
        var hidden: [String] = []
        var hiddenModules: [String] = []
        var index = 0
        while index < lines.count {
            let line = lines[index]
            if line.hasPrefix("<!-- compile:") {
                var comment = [line]
                while !comment.last!.hasSuffix("-->"), index + 1 < lines.count {
                    index += 1
                    comment.append(lines[index])
                }
                let head = comment[0].dropFirst("<!-- compile:".count).trimmingCharacters(in: .whitespaces)
                if head.hasPrefix("with") {
                    hidden += comment.dropFirst().dropLast()
                    let words = head.split(separator: " ")
                    if words.count == 3, words[1] == "module" { hiddenModules.append(String(words[2])) }
                } else {
                    directives.append(head.replacingOccurrences(of: "-->", with: "").trimmingCharacters(in: .whitespaces))
                }
            } else if line == "```swift" {
                let start = index + 1
                var code: [String] = []
                index += 1
                while index < lines.count, lines[index] != "```" {
                    code.append(lines[index])
                    index += 1
                }
                blockCount += 1
                let block = Block(line: start, code: code, hidden: hidden, hiddenModules: hiddenModules)
                if isManifest(code) {
                    examples.append(MarkdownExample(document: name, kind: .manifest, blocks: [block]))
                } else if directives.contains("aside") {
                    guard let current else {
                        throw MarkdownError(description: "\(name):\(start): an aside, and no example before it to go with")
                    }
                    examples.append(MarkdownExample(document: name, kind: .program, blocks: examples[current].blocks + [block]))
                } else if code.contains(where: { $0.hasPrefix("import ") }) {
                    examples.append(MarkdownExample(document: name, kind: .program, blocks: [block]))
                    current = examples.count - 1
                } else if let current {
                    examples[current].blocks.append(block)
                } else {
                    throw MarkdownError(description: "\(name):\(start): a Swift block without imports, and no example before it to continue")
                }
                directives = []
                hidden = []
                hiddenModules = []
            } else if !line.trimmingCharacters(in: .whitespaces).isEmpty {
                directives = []
                hidden = []
                hiddenModules = []
            }
            index += 1
        }
        return (examples, blockCount)
    }
}

struct MarkdownError: Error, CustomStringConvertible {
    var description: String
}
