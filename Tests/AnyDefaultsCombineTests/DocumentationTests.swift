import Foundation
import Testing
import TestSupport

/// The examples of Docs/Combine.md: every line of code in the document is in
/// Tests/Children/TestChild/Combine/DocumentationExamples.swift (which imports only
/// `AnyDefaultsCombine`, as the document does), and running them prints what the document says.
@Suite struct DocumentationTests {
    static let root = URL(fileURLWithPath: #filePath).deletingLastPathComponent().deletingLastPathComponent().deletingLastPathComponent()

    /// The Swift blocks of a document, as lines, leaving out the Package.swift snippet; only those
    /// under the `## ` heading `section` if one is given.
    static func swiftBlocks(of document: String = "Docs/Combine.md", section: String? = nil) throws -> [[String]] {
        let text = try String(contentsOf: root.appendingPathComponent(document), encoding: .utf8)
        var blocks: [[String]] = []
        var current: [String]?
        var heading = ""
        for line in text.split(separator: "\n", omittingEmptySubsequences: false).map(String.init) {
            if current == nil, line.hasPrefix("## ") {
                heading = String(line.dropFirst(3))
            } else if current == nil, line == "```swift" {
                current = []
            } else if let block = current, line == "```" {
                if !block.contains(where: { $0.contains(".product(") }), section == nil || section == heading { blocks.append(block) }
                current = nil
            } else {
                current?.append(line)
            }
        }
        return blocks
    }

    /// Also the Combine section of Docs/Observation.md.
    @Test(arguments: [("Docs/Combine.md", nil), ("Docs/Observation.md", "Combine publishers")])
    func everyLineOfCodeInTheDocumentIsCompiled(document: String, section: String?) throws {
        let examples = try String(
            contentsOf: Self.root.appendingPathComponent("Tests/Children/TestChild/Combine/DocumentationExamples.swift"), encoding: .utf8)
        let compiled = Set(examples.split(separator: "\n").map { $0.trimmingCharacters(in: .whitespaces) })
        let code = try Self.swiftBlocks(of: document, section: section).joined().filter { !$0.hasPrefix("// ") && !$0.isEmpty }
        #expect(code.count > (section == nil ? 40 : 4))
        for line in code {
            #expect(compiled.contains(line.trimmingCharacters(in: .whitespaces)), "not in DocumentationExamples.swift: \(line)")
        }
        #expect(examples.split(separator: "\n").filter { $0.hasPrefix("import ") } == ["import AnyDefaultsCombine"])
    }

    @Test func theExamplesPrintWhatTheDocumentSays() throws {
        let documented = try Self.swiftBlocks().joined().filter { $0.hasPrefix("// ") }.map { String($0.dropFirst(3)) }
        let result = try ChildProcess.run("TestChild", ["combine-docs"], environment: ["ANYDEFAULTS_STORE": "memory:"])
        #expect(result.status == 0, "\(result.standardError)")
        #expect(result.standardOutput.split(separator: "\n").map(String.init) == documented + ["mocked 0.1 stored 0.8"])
    }
}
