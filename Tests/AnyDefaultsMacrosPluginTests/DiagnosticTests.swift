import SwiftSyntaxMacrosGenericTestSupport
import Testing

/// The macros' errors and warnings, where they point, and what their fix-its make of the source.
@Suite struct DiagnosticTests {
    @Test func aLetInASchemaIsAnErrorFixedByVar() {
        assertExpansion(
            """
            @DefaultsSchema
            struct Audio {
                let volume = 0.5
            }
            """,
            expandsTo:
            #"""
            struct Audio {
                let volume = 0.5
            }
            """#,
            diagnostics: [
                DiagnosticSpec(
                    message: "'let volume' cannot be read from the store; a schema's properties are 'var'", line: 3, column: 5,
                    fixIts: [FixItSpec(message: "use 'var'")])
            ],
            fixedSource: """
                @DefaultsSchema
                struct Audio {
                    var volume = 0.5
                }
                """)
    }

    @Test func aPropertyWithoutAnInitialValueIsAnErrorFixedByADefault() {
        assertExpansion(
            """
            @ObservableDefaults
            final class Settings {
                var count: Int
            }
            """,
            expandsTo:
            #"""
            final class Settings {
                var count: Int

                private let _$defaults: AnyDefaultsMacros.ObservableDefaultsStorage

                /// A model whose settings live in `store`, under `prefix`; with `ignoreExternalChanges`, its
                /// observers are told only of changes made through it.
                init(store: AnyDefaultsCore.Defaults = AnyDefaultsCore.Defaults.standard, prefix: String = "", ignoreExternalChanges: Bool = false) {
                    _$defaults = AnyDefaultsMacros.ObservableDefaultsStorage(store: store, prefix: prefix, ignoresExternalChanges: ignoreExternalChanges)
                }

                /// A model whose settings live in the store a store string names, such as `"sqlite:prefs.sqlite"`.
                convenience init(store: String, prefix: String = "", ignoreExternalChanges: Bool = false) throws(AnyDefaultsCore.DefaultsError) {
                    self.init(store: try AnyDefaultsCore.Defaults(url: store), prefix: prefix, ignoreExternalChanges: ignoreExternalChanges)
                }

                /// A model whose settings live in `provider` (behind a cache).
                convenience init(provider: some AnyDefaultsCore.DefaultsProvider, prefix: String = "", ignoreExternalChanges: Bool = false) {
                    self.init(store: AnyDefaultsCore.Defaults(provider), prefix: prefix, ignoreExternalChanges: ignoreExternalChanges)
                }
            }

            extension Settings: AnyDefaultsMacros.ObservableDefaults {
            }
            """#,
            diagnostics: [
                DiagnosticSpec(
                    message: "'count' needs an initial value, the value to read while nothing is stored", line: 3, column: 9,
                    fixIts: [FixItSpec(message: "add a default value")])
            ],
            fixedSource: """
                @ObservableDefaults
                final class Settings {
                    var count: Int = <#default#>
                }
                """)
    }

    @Test func aTypeThatCannotBeToldFromTheInitialValueNeedsAnAnnotation() {
        assertExpansion(
            """
            @ObservableDefaults
            final class Settings {
                var theme = .light
            }
            """,
            expandsTo:
            #"""
            final class Settings {
                var theme = .light

                private let _$defaults: AnyDefaultsMacros.ObservableDefaultsStorage

                /// A model whose settings live in `store`, under `prefix`; with `ignoreExternalChanges`, its
                /// observers are told only of changes made through it.
                init(store: AnyDefaultsCore.Defaults = AnyDefaultsCore.Defaults.standard, prefix: String = "", ignoreExternalChanges: Bool = false) {
                    _$defaults = AnyDefaultsMacros.ObservableDefaultsStorage(store: store, prefix: prefix, ignoresExternalChanges: ignoreExternalChanges)
                }

                /// A model whose settings live in the store a store string names, such as `"sqlite:prefs.sqlite"`.
                convenience init(store: String, prefix: String = "", ignoreExternalChanges: Bool = false) throws(AnyDefaultsCore.DefaultsError) {
                    self.init(store: try AnyDefaultsCore.Defaults(url: store), prefix: prefix, ignoreExternalChanges: ignoreExternalChanges)
                }

                /// A model whose settings live in `provider` (behind a cache).
                convenience init(provider: some AnyDefaultsCore.DefaultsProvider, prefix: String = "", ignoreExternalChanges: Bool = false) {
                    self.init(store: AnyDefaultsCore.Defaults(provider), prefix: prefix, ignoreExternalChanges: ignoreExternalChanges)
                }
            }

            extension Settings: AnyDefaultsMacros.ObservableDefaults {
            }
            """#,
            diagnostics: [
                DiagnosticSpec(
                    message: "'theme' needs a type annotation: its type cannot be told from .light", line: 3, column: 17,
                    fixIts: [FixItSpec(message: "add a type annotation")])
            ],
            fixedSource: """
                @ObservableDefaults
                final class Settings {
                    var theme: <#Type#> = .light
                }
                """)
    }

    @Test func aComputedPropertyMarkedAsStoredIsAnErrorFixedByRemovingTheMark() {
        assertExpansion(
            """
            @ObservableDefaults
            final class Settings {
                @DefaultsBacked var total: Int { 3 }
            }
            """,
            expandsTo:
            #"""
            final class Settings {
                var total: Int { 3 }

                private let _$defaults: AnyDefaultsMacros.ObservableDefaultsStorage

                /// A model whose settings live in `store`, under `prefix`; with `ignoreExternalChanges`, its
                /// observers are told only of changes made through it.
                init(store: AnyDefaultsCore.Defaults = AnyDefaultsCore.Defaults.standard, prefix: String = "", ignoreExternalChanges: Bool = false) {
                    _$defaults = AnyDefaultsMacros.ObservableDefaultsStorage(store: store, prefix: prefix, ignoresExternalChanges: ignoreExternalChanges)
                }

                /// A model whose settings live in the store a store string names, such as `"sqlite:prefs.sqlite"`.
                convenience init(store: String, prefix: String = "", ignoreExternalChanges: Bool = false) throws(AnyDefaultsCore.DefaultsError) {
                    self.init(store: try AnyDefaultsCore.Defaults(url: store), prefix: prefix, ignoreExternalChanges: ignoreExternalChanges)
                }

                /// A model whose settings live in `provider` (behind a cache).
                convenience init(provider: some AnyDefaultsCore.DefaultsProvider, prefix: String = "", ignoreExternalChanges: Bool = false) {
                    self.init(store: AnyDefaultsCore.Defaults(provider), prefix: prefix, ignoreExternalChanges: ignoreExternalChanges)
                }
            }

            extension Settings: AnyDefaultsMacros.ObservableDefaults {
            }
            """#,
            diagnostics: [
                DiagnosticSpec(
                    message: "a computed property cannot be stored or observed: it has no value of its own", line: 3, column: 5,
                    fixIts: [FixItSpec(message: "remove the attribute")])
            ],
            fixedSource: """
                @ObservableDefaults
                final class Settings {
                    var total: Int { 3 }
                }
                """)
    }

    @Test func anInvalidPrefixIsAnErrorFixedByTheValidOne() {
        assertExpansion(
            """
            @ObservableDefaults(prefix: " player. ")
            final class Settings {}
            """,
            expandsTo:
            #"""
            final class Settings {

                private let _$defaults: AnyDefaultsMacros.ObservableDefaultsStorage

                /// A model whose settings live in `store`, under `prefix`; with `ignoreExternalChanges`, its
                /// observers are told only of changes made through it.
                init(store: AnyDefaultsCore.Defaults = AnyDefaultsCore.Defaults.standard, prefix: String = "player.", ignoreExternalChanges: Bool = false) {
                    _$defaults = AnyDefaultsMacros.ObservableDefaultsStorage(store: store, prefix: prefix, ignoresExternalChanges: ignoreExternalChanges)
                }

                /// A model whose settings live in the store a store string names, such as `"sqlite:prefs.sqlite"`.
                convenience init(store: String, prefix: String = "player.", ignoreExternalChanges: Bool = false) throws(AnyDefaultsCore.DefaultsError) {
                    self.init(store: try AnyDefaultsCore.Defaults(url: store), prefix: prefix, ignoreExternalChanges: ignoreExternalChanges)
                }

                /// A model whose settings live in `provider` (behind a cache).
                convenience init(provider: some AnyDefaultsCore.DefaultsProvider, prefix: String = "player.", ignoreExternalChanges: Bool = false) {
                    self.init(store: AnyDefaultsCore.Defaults(provider), prefix: prefix, ignoreExternalChanges: ignoreExternalChanges)
                }
            }

            extension Settings: AnyDefaultsMacros.ObservableDefaults {
            }
            """#,
            diagnostics: [
                DiagnosticSpec(
                    message: #"" player. " is not a valid key prefix: it begins or ends with spaces"#, line: 1, column: 29,
                    fixIts: [FixItSpec(message: #"use "player.""#)])
            ],
            fixedSource: """
                @ObservableDefaults(prefix: "player.")
                final class Settings {}
                """)
    }

    @Test func aPrefixWithControlCharactersOrNotComposedOrNotALiteral() {
        assertExpansion(
            #"""
            @DefaultsSchema(prefix: "tab\there.")
            struct A {}
            @DefaultsSchema(prefix: "cafe\u{301}.")
            struct B {}
            @DefaultsSchema(prefix: name)
            struct C {}
            """#,
            expandsTo:
            #"""
            struct A {}
            struct B {}
            struct C {}
            """#,
            diagnostics: [
                DiagnosticSpec(
                    message: #""tab\there." is not a valid key prefix: it contains control characters"#, line: 1, column: 25,
                    fixIts: [FixItSpec(message: #"use "tabhere.""#)]),
                DiagnosticSpec(
                    message: #""café." is not a valid key prefix: it is not in the composed Unicode form (NFC) that stores keep keys in"#,
                    line: 3, column: 25, fixIts: [FixItSpec(message: #"use "café.""#)]),
                DiagnosticSpec(
                    message: "the prefix must be a string literal; to choose one when the program runs, pass it to the initializer",
                    line: 5, column: 25),
            ])
    }

    @Test func anInvalidCustomKeyIsAnError() {
        assertExpansion(
            """
            @ObservableDefaults
            final class Settings {
                @SettingKey("") var name = "guest"
                @SettingKey("a\\nb") var other = 0
            }
            """,
            expandsTo:
            #"""
            final class Settings {
                var name = "guest"
                var other = 0

                private let _$defaults: AnyDefaultsMacros.ObservableDefaultsStorage

                /// A model whose settings live in `store`, under `prefix`; with `ignoreExternalChanges`, its
                /// observers are told only of changes made through it.
                init(store: AnyDefaultsCore.Defaults = AnyDefaultsCore.Defaults.standard, prefix: String = "", ignoreExternalChanges: Bool = false) {
                    _$defaults = AnyDefaultsMacros.ObservableDefaultsStorage(store: store, prefix: prefix, ignoresExternalChanges: ignoreExternalChanges)
                }

                /// A model whose settings live in the store a store string names, such as `"sqlite:prefs.sqlite"`.
                convenience init(store: String, prefix: String = "", ignoreExternalChanges: Bool = false) throws(AnyDefaultsCore.DefaultsError) {
                    self.init(store: try AnyDefaultsCore.Defaults(url: store), prefix: prefix, ignoreExternalChanges: ignoreExternalChanges)
                }

                /// A model whose settings live in `provider` (behind a cache).
                convenience init(provider: some AnyDefaultsCore.DefaultsProvider, prefix: String = "", ignoreExternalChanges: Bool = false) {
                    self.init(store: AnyDefaultsCore.Defaults(provider), prefix: prefix, ignoreExternalChanges: ignoreExternalChanges)
                }
            }

            extension Settings: AnyDefaultsMacros.ObservableDefaults {
            }
            """#,
            diagnostics: [
                DiagnosticSpec(
                    message: #""" is not a valid key: it is blank"#, line: 3, column: 17,
                    fixIts: [FixItSpec(message: "store it under its name")]),
                DiagnosticSpec(
                    message: #""a\nb" is not a valid key: it contains control characters"#, line: 4, column: 17,
                    fixIts: [FixItSpec(message: #"use "ab""#)]),
            ],
            fixedSource: """
                @ObservableDefaults
                final class Settings {
                    var name = "guest"
                    @SettingKey("ab") var other = 0
                }
                """)
    }

    @Test func twoPropertiesUnderOneKeyIsAnError() {
        assertExpansion(
            """
            @DefaultsSchema(prefix: "p.")
            struct Settings {
                var name = "a"
                @SettingKey("name") var other = "b"
            }
            """,
            expandsTo:
            #"""
            struct Settings {
                var name = "a"
                var other = "b"
            }
            """#,
            diagnostics: [
                DiagnosticSpec(message: #"'other' is stored under the same key as 'name', "p.name""#, line: 4, column: 29)
            ])
    }

    @Test func theClassMacroOnAStructIsFixedByTheSchemaMacro() {
        assertExpansion(
            """
            @ObservableDefaults(prefix: "audio.", observeFirst: true)
            struct Audio {
                var volume = 0.5
            }
            """,
            expandsTo:
            #"""
            struct Audio {
                var volume = 0.5
            }
            """#,
            diagnostics: [
                DiagnosticSpec(
                    message: "@ObservableDefaults applies to a class; a struct describes a snapshot with @DefaultsSchema", line: 1, column: 1,
                    fixIts: [FixItSpec(message: "use @DefaultsSchema")])
            ],
            fixedSource: """
                @DefaultsSchema(prefix: "audio.")
                struct Audio {
                    var volume = 0.5
                }
                """)
    }

    @Test func theSchemaMacroOnAClassIsFixedByTheClassMacro() {
        assertExpansion(
            """
            @DefaultsSchema(prefix: "audio.")
            final class Audio {
                var volume = 0.5
            }
            """,
            expandsTo:
            #"""
            final class Audio {
                var volume = 0.5
            }
            """#,
            diagnostics: [
                DiagnosticSpec(
                    message: "@DefaultsSchema applies to a struct; a class becomes an observable settings model with @ObservableDefaults",
                    line: 1, column: 1, fixIts: [FixItSpec(message: "use @ObservableDefaults")])
            ],
            fixedSource: """
                @ObservableDefaults(prefix: "audio.")
                final class Audio {
                    var volume = 0.5
                }
                """)
    }

    @Test func theMacrosOnAnEnumOrAnActor() {
        assertExpansion(
            """
            @ObservableDefaults
            enum Mode {}
            @DefaultsSchema
            actor Store {}
            """,
            expandsTo:
            #"""
            enum Mode {}
            actor Store {}
            """#,
            diagnostics: [
                DiagnosticSpec(message: "@ObservableDefaults applies to a class", line: 1, column: 1),
                DiagnosticSpec(message: "@DefaultsSchema applies to a struct", line: 3, column: 1),
            ])
    }

    @Test func marksThatContradictOrDoNotBelong() {
        assertExpansion(
            """
            @ObservableDefaults
            final class Settings {
                @MemoryOnly @DefaultsBacked var a = 0
                @DefaultsBacked var b = 0 {
                    didSet {}
                }
                @DefaultsBacked static var c = 0
            }
            @DefaultsSchema
            struct Schema {
                @MemoryOnly var d = 0
            }
            struct Plain {
                @MemoryOnly var e = 0
            }
            """,
            expandsTo:
            #"""
            final class Settings {
                var a = 0
                var b = 0 {
                    didSet {}
                }
                static var c = 0

                private let _$defaults: AnyDefaultsMacros.ObservableDefaultsStorage

                /// A model whose settings live in `store`, under `prefix`; with `ignoreExternalChanges`, its
                /// observers are told only of changes made through it.
                init(store: AnyDefaultsCore.Defaults = AnyDefaultsCore.Defaults.standard, prefix: String = "", ignoreExternalChanges: Bool = false) {
                    _$defaults = AnyDefaultsMacros.ObservableDefaultsStorage(store: store, prefix: prefix, ignoresExternalChanges: ignoreExternalChanges)
                }

                /// A model whose settings live in the store a store string names, such as `"sqlite:prefs.sqlite"`.
                convenience init(store: String, prefix: String = "", ignoreExternalChanges: Bool = false) throws(AnyDefaultsCore.DefaultsError) {
                    self.init(store: try AnyDefaultsCore.Defaults(url: store), prefix: prefix, ignoreExternalChanges: ignoreExternalChanges)
                }

                /// A model whose settings live in `provider` (behind a cache).
                convenience init(provider: some AnyDefaultsCore.DefaultsProvider, prefix: String = "", ignoreExternalChanges: Bool = false) {
                    self.init(store: AnyDefaultsCore.Defaults(provider), prefix: prefix, ignoreExternalChanges: ignoreExternalChanges)
                }
            }
            struct Schema {
                var d = 0
            }
            struct Plain {
                var e = 0
            }

            extension Settings: AnyDefaultsMacros.ObservableDefaults {
            }
            """#,
            diagnostics: [
                DiagnosticSpec(message: "'a' has marks that contradict each other; keep one", line: 3, column: 17),
                DiagnosticSpec(message: "'b' cannot have willSet or didSet: observe it with Observation instead", line: 4, column: 31),
                DiagnosticSpec(
                    message: "only instance properties can be stored or observed", line: 7, column: 5,
                    fixIts: [FixItSpec(message: "remove the attribute")]),
                DiagnosticSpec(
                    message: "every property of a schema is read from the store; keep values that are not in a separate type", line: 11,
                    column: 5, fixIts: [FixItSpec(message: "remove the attribute")]),
                DiagnosticSpec(
                    message: "@MemoryOnly has an effect only on a property of an @ObservableDefaults class or a @DefaultsSchema struct",
                    line: 14, column: 5),
            ])
    }

    @Test func flagsMustBeLiteralsAndObservableIsRedundant() {
        assertExpansion(
            """
            @Observable
            @ObservableDefaults(observeFirst: isBeta)
            final class Settings {}
            """,
            expandsTo:
            #"""
            @Observable
            final class Settings {

                private let _$defaults: AnyDefaultsMacros.ObservableDefaultsStorage

                /// A model whose settings live in `store`, under `prefix`; with `ignoreExternalChanges`, its
                /// observers are told only of changes made through it.
                init(store: AnyDefaultsCore.Defaults = AnyDefaultsCore.Defaults.standard, prefix: String = "", ignoreExternalChanges: Bool = false) {
                    _$defaults = AnyDefaultsMacros.ObservableDefaultsStorage(store: store, prefix: prefix, ignoresExternalChanges: ignoreExternalChanges)
                }

                /// A model whose settings live in the store a store string names, such as `"sqlite:prefs.sqlite"`.
                convenience init(store: String, prefix: String = "", ignoreExternalChanges: Bool = false) throws(AnyDefaultsCore.DefaultsError) {
                    self.init(store: try AnyDefaultsCore.Defaults(url: store), prefix: prefix, ignoreExternalChanges: ignoreExternalChanges)
                }

                /// A model whose settings live in `provider` (behind a cache).
                convenience init(provider: some AnyDefaultsCore.DefaultsProvider, prefix: String = "", ignoreExternalChanges: Bool = false) {
                    self.init(store: AnyDefaultsCore.Defaults(provider), prefix: prefix, ignoreExternalChanges: ignoreExternalChanges)
                }
            }

            extension Settings: AnyDefaultsMacros.ObservableDefaults {
            }
            """#,
            diagnostics: [
                DiagnosticSpec(message: "'observeFirst' must be the literal true or false", line: 2, column: 35),
                DiagnosticSpec(
                    message: "@ObservableDefaults makes the class observable already; remove @Observable", line: 1, column: 1,
                    fixIts: [FixItSpec(message: "remove @Observable")]),
            ],
            fixedSource: """
                @ObservableDefaults(observeFirst: isBeta)
                final class Settings {}
                """)
    }

    @Test func aLetInAModelIsAWarningFixedByVarOrByMarkingItIgnored() {
        let source = """
            @ObservableDefaults(autoInit: false)
            final class Settings {
                let id = 1
            }
            """
        let expanded = """
            final class Settings {
                let id = 1

                private let _$defaults = AnyDefaultsMacros.ObservableDefaultsStorage(store: AnyDefaultsCore.Defaults.standard, prefix: "", ignoresExternalChanges: false)
            }

            extension Settings: AnyDefaultsMacros.ObservableDefaults {
            }
            """
        let warning = DiagnosticSpec(
            message: "'let id' is neither stored nor observed; use 'var' to store it, or mark it @DefaultsIgnored", line: 3, column: 5,
            severity: .warning, fixIts: [FixItSpec(message: "use 'var'"), FixItSpec(message: "mark it @DefaultsIgnored")])
        assertExpansion(
            source, expandsTo: expanded, diagnostics: [warning], applyFixIts: ["use 'var'"],
            fixedSource: """
                @ObservableDefaults(autoInit: false)
                final class Settings {
                    var id = 1
                }
                """)
        assertExpansion(
            source, expandsTo: expanded, diagnostics: [warning], applyFixIts: ["mark it @DefaultsIgnored"],
            fixedSource: """
                @ObservableDefaults(autoInit: false)
                final class Settings {
                    @DefaultsIgnored let id = 1
                }
                """)
    }
}
