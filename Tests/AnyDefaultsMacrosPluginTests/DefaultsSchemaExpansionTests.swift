import SwiftSyntaxMacrosGenericTestSupport
import Testing

/// What `@DefaultsSchema` writes, exactly.
@Suite struct DefaultsSchemaExpansionTests {
    @Test func aSchemaReadsWritesAndComparesEveryKey() {
        assertExpansion(
            """
            @DefaultsSchema(prefix: "audio.")
            public struct Audio {
                var volume = 0.5
                @SettingKey("is_muted") var muted = false
                var device: String?
                var label: String { "x" }
                static let shared = Audio()
            }
            """,
            expandsTo:
            #"""
            public struct Audio {
                var volume = 0.5
                var muted = false
                var device: String?
                var label: String { "x" }
                static let shared = Audio()
            }

            extension Audio: AnyDefaultsMacros.DefaultsSchema {
                public static var defaultsSchemaKeys: [String] {
                    ["audio.volume", "audio.is_muted", "audio.device"]
                }

                public init(defaultsSchemaValues values: AnyDefaultsMacros.DefaultsSchemaValues) {
                    self.volume = values.value(forKey: "audio.volume", default: self.volume)
                    self.muted = values.value(forKey: "audio.is_muted", default: self.muted)
                    self.device = values.value(forKey: "audio.device", default: self.device)
                }

                public func writeDefaultsSchemaChanges(from old: Self, to transaction: inout AnyDefaultsCore.DefaultsTransaction) {
                    AnyDefaultsMacros.DefaultsSchemaValues.write(volume, old: old.volume, forKey: "audio.volume", to: &transaction)
                    AnyDefaultsMacros.DefaultsSchemaValues.write(muted, old: old.muted, forKey: "audio.is_muted", to: &transaction)
                    AnyDefaultsMacros.DefaultsSchemaValues.write(device, old: old.device, forKey: "audio.device", to: &transaction)
                }

                public static func == (lhs: Self, rhs: Self) -> Bool {
                    AnyDefaultsMacros.DefaultsSchemaEquality.equal(lhs.volume, rhs.volume)
                        && AnyDefaultsMacros.DefaultsSchemaEquality.equal(lhs.muted, rhs.muted)
                        && AnyDefaultsMacros.DefaultsSchemaEquality.equal(lhs.device, rhs.device)
                }
            }
            """#)
    }

    /// A struct that says `Equatable` and `==` itself keeps its `==`; an empty schema compares equal.
    @Test func anEmptySchemaAndOneWithItsOwnEquality() {
        assertExpansion(
            """
            @DefaultsSchema
            struct Empty {
                static func == (lhs: Empty, rhs: Empty) -> Bool { true }
            }
            """,
            expandsTo:
            #"""
            struct Empty {
                static func == (lhs: Empty, rhs: Empty) -> Bool { true }
            }

            extension Empty: AnyDefaultsMacros.DefaultsSchema {
                static var defaultsSchemaKeys: [String] {
                    []
                }

                init(defaultsSchemaValues values: AnyDefaultsMacros.DefaultsSchemaValues) {

                }

                func writeDefaultsSchemaChanges(from old: Self, to transaction: inout AnyDefaultsCore.DefaultsTransaction) {

                }
            }
            """#)
    }

    /// Prefixes and keys are read as Swift reads the literal (escapes, raw strings) and written back
    /// as plain literals.
    @Test func rawAndEscapedLiteralsAreReadAsSwiftReadsThem() {
        assertExpansion(
            #"""
            @DefaultsSchema(prefix: #"win\paths."#)
            struct Paths {
                @SettingKey("caf\u{E9}") var cafe = ""
            }
            """#,
            expandsTo:
            #"""
            struct Paths {
                var cafe = ""
            }

            extension Paths: AnyDefaultsMacros.DefaultsSchema {
                static var defaultsSchemaKeys: [String] {
                    [#"win\paths.café"#]
                }

                init(defaultsSchemaValues values: AnyDefaultsMacros.DefaultsSchemaValues) {
                    self.cafe = values.value(forKey: #"win\paths.café"#, default: self.cafe)
                }

                func writeDefaultsSchemaChanges(from old: Self, to transaction: inout AnyDefaultsCore.DefaultsTransaction) {
                    AnyDefaultsMacros.DefaultsSchemaValues.write(cafe, old: old.cafe, forKey: #"win\paths.café"#, to: &transaction)
                }

                static func == (lhs: Self, rhs: Self) -> Bool {
                    AnyDefaultsMacros.DefaultsSchemaEquality.equal(lhs.cafe, rhs.cafe)
                }
            }
            """#)
    }
}
