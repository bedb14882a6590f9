import Foundation
import Testing
import TestSupport

/// Every Swift block of README.md and Docs/*.md compiles as shown: with exactly the imports its
/// example shows, against the modules this package built (see `MarkdownExample` for the rules).
/// A new page or a new block is picked up without any change here.
@Suite(.ownThreads) struct DocumentationExamplesTests {
    static let documents: [String] = {
        let docs = (try? FileManager.default.contentsOfDirectory(atPath: SwiftCompiler.root.appendingPathComponent("Docs").path)) ?? []
        return ["README.md"] + docs.filter { $0.hasSuffix(".md") }.sorted().map { "Docs/\($0)" }
    }()

    static func examples(of document: String) throws -> (examples: [MarkdownExample], blockCount: Int) {
        try MarkdownExample.read(SwiftCompiler.root.appendingPathComponent(document), name: document)
    }

    static let allExamples: [MarkdownExample] = documents.flatMap { (try? examples(of: $0).examples) ?? [] }

    @Test(arguments: allExamples)
    func compilesAsShown(_ example: MarkdownExample) throws {
        let path = SwiftCompiler.root.appendingPathComponent(example.document).path
        let result = try SwiftCompiler.typecheck(
            example.source(documentPath: path), name: "Example", library: example.isLibrary, manifest: example.kind == .manifest)
        #expect(result.status == 0, "\(example) does not compile as shown:\n\(result.standardError)")
        let warnings = result.standardError.split(separator: "\n").filter { $0.contains("warning:") }
        #expect(warnings.isEmpty, "\(example) compiles with warnings:\n\(warnings.joined(separator: "\n"))")
    }

    /// Every block is in an example, and each document is read (none is skipped by an error).
    @Test func everySwiftBlockIsCompiled() throws {
        #expect(Self.documents.contains("README.md") && Self.documents.count > 8)
        var total = 0
        for document in Self.documents {
            let (examples, blockCount) = try Self.examples(of: document)
            #expect(Set(examples.flatMap { $0.blocks.map(\.line) }).count == blockCount, "\(document)")
            let text = try String(contentsOf: SwiftCompiler.root.appendingPathComponent(document), encoding: .utf8)
            #expect(text.components(separatedBy: "\n```swift\n").count - 1 == blockCount, "\(document): a fence the reader missed")
            total += blockCount
        }
        #expect(total == Set(Self.allExamples.flatMap { example in example.blocks.map { "\(example.document):\($0.line)" } }).count)
    }

    /// Every product a page tells a user to depend on exists, under the identity the README's
    /// `.package(url:)` line gives.
    @Test func productsNamedInTheDocumentsExist() throws {
        let manifest = try String(contentsOf: SwiftCompiler.root.appendingPathComponent("Package.swift"), encoding: .utf8)
        let products = Set(manifest.matches(of: #/\.(?:library|executable)\(name: "([^"]+)"/#).map { String($0.1) })
        #expect(products.contains("AnyDefaults") && products.contains("AnyDefaultsTestTraits"))
        var named = 0
        for example in Self.allExamples where example.kind == .manifest {
            let code = example.blocks.flatMap(\.code).joined(separator: "\n")
            for match in code.matches(of: #/\.product\(name: "([^"]+)", package: "([^"]+)"\)/#) {
                named += 1
                #expect(products.contains(String(match.1)), "\(example): no product \(match.1)")
                #expect(match.2 == "AnyDefaults", "\(example): package: \(match.2) is not the identity of the README's URL")
            }
            for match in code.matches(of: #/\.package\(url: "([^"]+)"/#) {
                #expect(match.1.hasSuffix("/AnyDefaults.git"), "\(example): the identity of \(match.1) is not AnyDefaults")
            }
        }
        #expect(named >= 5)
    }
}
