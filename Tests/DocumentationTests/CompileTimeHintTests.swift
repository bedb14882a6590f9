import Testing
import TestSupport

/// What the compiler says to a new user: a `Codable` type that did not adopt `DefaultsCodable`
/// gets a message that names the fix, not "requires that 'Layout' conform to 'DefaultsSerializable'".
@Suite(.ownThreads) struct CompileTimeHintTests {
    static let declarations = """
        import AnyDefaults
        struct Layout: Codable { var columns: Int }
        let defaults = Defaults(MemoryProvider())
        """

    @Test(arguments: [
        "defaults.set(Layout(columns: 2), forKey: \"layout\")",
        "let layout: Layout? = defaults.value(forKey: \"layout\")",
        "try defaults.throwing.set(Layout(columns: 2), forKey: \"layout\")",
        "let layout = try defaults.throwing.value(Layout.self, forKey: \"layout\")",
        "try defaults.write { tx in tx.set(Layout(columns: 2), forKey: \"layout\") }",
        "try defaults.write { tx in _ = tx.value(Layout.self, forKey: \"layout\") }",
        "defaults.set([Layout(columns: 2)], forKey: \"layouts\")",
    ])
    func aCodableTypeWithoutDefaultsCodableIsToldWhatToAdd(_ use: String) throws {
        let result = try SwiftCompiler.typecheck(Self.declarations + "\n" + use + "\n", name: "Hint")
        #expect(result.status != 0)
        #expect(result.standardError.contains("adopts DefaultsCodable: add 'extension YourType: DefaultsCodable {}'"), "\(result.standardError)")
    }

    @Test func typesThatAreStoredStillChooseTheRealMethods() throws {
        let source = Self.declarations + """

            extension Layout: DefaultsCodable {}
            defaults.set(Layout(columns: 2), forKey: "layout")
            defaults.set(3, forKey: "count")
            defaults.set("dark", forKey: "theme")
            defaults.set([1, 2], forKey: "list")
            defaults.set(Optional<Int>.none, forKey: "gone")
            let layout: Layout? = defaults.value(forKey: "layout")
            let count = try defaults.throwing.value(Int.self, forKey: "count")
            try defaults.write { tx in tx.set(Layout(columns: 3), forKey: "layout") }
            print(layout as Any, count as Any)

            """
        let result = try SwiftCompiler.typecheck(source, name: "Hint")
        #expect(result.status == 0, "\(result.standardError)")
        #expect(!result.standardError.contains("warning:"), "\(result.standardError)")
    }
}
