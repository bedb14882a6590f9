import SwiftSyntaxMacrosGenericTestSupport
import Testing

/// What `@ObservableDefaults` writes, exactly.
@Suite struct ObservableDefaultsExpansionTests {
    @Test func storedMemoryOnlyAndIgnoredPropertiesWithTheGeneratedInitializers() {
        assertExpansion(
            """
            @ObservableDefaults(prefix: "player.")
            public final class Settings {
                var volume = 0.5
                var name: String = "guest"
                var nickname: String?
                @SettingKey("server_url") var serverURL = "https://example.com"
                @MemoryOnly var isEditing = false
                @DefaultsIgnored var scratch = 0
                @ObservationIgnored var cache = 0
                let id = 1
                var computed: Int { 1 }
                static var shared = 0
                func reset() {}
            }
            """,
            expandsTo:
            #"""
            public final class Settings {
                var volume {
                    init(initialValue) {
                    }
                    get {
                        _$defaults.value(of: _$volume, in: self, keyPath: \.volume)
                    }
                    set {
                        _$defaults.setValue(newValue, of: _$volume, in: self, keyPath: \.volume)
                    }
                }

                private let _$volume = AnyDefaultsMacros.ObservableDefaultsProperty(name: "volume", defaultValue: 0.5)
                var name: String {
                    @storageRestrictions(initializes: _$name)
                    init(initialValue) {
                        _$name = AnyDefaultsMacros.ObservableDefaultsProperty(name: "name", defaultValue: initialValue)
                    }
                    get {
                        _$defaults.value(of: _$name, in: self, keyPath: \.name)
                    }
                    set {
                        _$defaults.setValue(newValue, of: _$name, in: self, keyPath: \.name)
                    }
                }

                private let _$name: AnyDefaultsMacros.ObservableDefaultsProperty<String>
                var nickname: String? {
                    get {
                        _$defaults.value(of: _$nickname, in: self, keyPath: \.nickname)
                    }
                    set {
                        _$defaults.setValue(newValue, of: _$nickname, in: self, keyPath: \.nickname)
                    }
                }

                private let _$nickname = AnyDefaultsMacros.ObservableDefaultsProperty<String?>(name: "nickname", defaultValue: nil)
                var serverURL {
                    init(initialValue) {
                    }
                    get {
                        _$defaults.value(of: _$serverURL, in: self, keyPath: \.serverURL)
                    }
                    set {
                        _$defaults.setValue(newValue, of: _$serverURL, in: self, keyPath: \.serverURL)
                    }
                }

                private let _$serverURL = AnyDefaultsMacros.ObservableDefaultsProperty(name: "server_url", defaultValue: "https://example.com")
                var isEditing {
                    @storageRestrictions(initializes: _$isEditing)
                    init(initialValue) {
                        _$isEditing = initialValue
                    }
                    get {
                        _$defaults.access(self, keyPath: \.isEditing)
                        return _$isEditing
                    }
                    set {
                        _$defaults.withMutation(of: self, keyPath: \.isEditing) {
                            _$isEditing = newValue
                        }
                    }
                }

                private var _$isEditing = false
                var scratch = 0
                @ObservationIgnored var cache = 0
                let id = 1
                var computed: Int { 1 }
                static var shared = 0
                func reset() {}

                private let _$defaults: AnyDefaultsMacros.ObservableDefaultsStorage

                /// A model whose settings live in `store`, under `prefix`; with `ignoreExternalChanges`, its
                /// observers are told only of changes made through it.
                public init(store: AnyDefaultsCore.Defaults = AnyDefaultsCore.Defaults.standard, prefix: String = "player.", ignoreExternalChanges: Bool = false) {
                    _$defaults = AnyDefaultsMacros.ObservableDefaultsStorage(store: store, prefix: prefix, ignoresExternalChanges: ignoreExternalChanges)
                }

                /// A model whose settings live in the store a store string names, such as `"sqlite:prefs.sqlite"`.
                public convenience init(store: String, prefix: String = "player.", ignoreExternalChanges: Bool = false) throws(AnyDefaultsCore.DefaultsError) {
                    self.init(store: try AnyDefaultsCore.Defaults(url: store), prefix: prefix, ignoreExternalChanges: ignoreExternalChanges)
                }

                /// A model whose settings live in `provider` (behind a cache).
                public convenience init(provider: some AnyDefaultsCore.DefaultsProvider, prefix: String = "player.", ignoreExternalChanges: Bool = false) {
                    self.init(store: AnyDefaultsCore.Defaults(provider), prefix: prefix, ignoreExternalChanges: ignoreExternalChanges)
                }
            }

            extension Settings: AnyDefaultsMacros.ObservableDefaults {
            }
            """#,
            diagnostics: [
                DiagnosticSpec(
                    message: "'let id' is neither stored nor observed; use 'var' to store it, or mark it @DefaultsIgnored", line: 10, column: 5,
                    severity: .warning, fixIts: [FixItSpec(message: "use 'var'"), FixItSpec(message: "mark it @DefaultsIgnored")])
            ])
    }

    /// Observe-first mode with a store and the external-changes flag given to the macro, on a class
    /// with an initializer of its own: the storage takes the macro's arguments, no initializer is added.
    @Test func observeFirstOnAClassWithItsOwnInitializer() {
        assertExpansion(
            """
            @ObservableDefaults(store: AppStores.main, observeFirst: true, ignoreExternalChanges: true)
            final class Editor {
                var selection = 0
                @DefaultsBacked var fontSize: Double = 13
                @DefaultsBacked("theme_name") var theme = "light"
                init() {}
            }
            """,
            expandsTo:
            #"""
            final class Editor {
                var selection {
                    @storageRestrictions(initializes: _$selection)
                    init(initialValue) {
                        _$selection = initialValue
                    }
                    get {
                        _$defaults.access(self, keyPath: \.selection)
                        return _$selection
                    }
                    set {
                        _$defaults.withMutation(of: self, keyPath: \.selection) {
                            _$selection = newValue
                        }
                    }
                }

                private var _$selection = 0
                var fontSize: Double {
                    @storageRestrictions(initializes: _$fontSize)
                    init(initialValue) {
                        _$fontSize = AnyDefaultsMacros.ObservableDefaultsProperty(name: "fontSize", defaultValue: initialValue)
                    }
                    get {
                        _$defaults.value(of: _$fontSize, in: self, keyPath: \.fontSize)
                    }
                    set {
                        _$defaults.setValue(newValue, of: _$fontSize, in: self, keyPath: \.fontSize)
                    }
                }

                private let _$fontSize: AnyDefaultsMacros.ObservableDefaultsProperty<Double>
                var theme {
                    init(initialValue) {
                    }
                    get {
                        _$defaults.value(of: _$theme, in: self, keyPath: \.theme)
                    }
                    set {
                        _$defaults.setValue(newValue, of: _$theme, in: self, keyPath: \.theme)
                    }
                }

                private let _$theme = AnyDefaultsMacros.ObservableDefaultsProperty(name: "theme_name", defaultValue: "light")
                init() {}

                private let _$defaults = AnyDefaultsMacros.ObservableDefaultsStorage(store: AppStores.main, prefix: "", ignoresExternalChanges: true)
            }

            extension Editor: AnyDefaultsMacros.ObservableDefaults {
            }
            """#)
    }

    @Test func noInitializerWhenAutoInitIsFalse() {
        assertExpansion(
            """
            @ObservableDefaults(prefix: "app.", autoInit: false)
            class Flags {
                var beta = false
            }
            """,
            expandsTo:
            #"""
            class Flags {
                var beta {
                    init(initialValue) {
                    }
                    get {
                        _$defaults.value(of: _$beta, in: self, keyPath: \.beta)
                    }
                    set {
                        _$defaults.setValue(newValue, of: _$beta, in: self, keyPath: \.beta)
                    }
                }

                private let _$beta = AnyDefaultsMacros.ObservableDefaultsProperty(name: "beta", defaultValue: false)

                private let _$defaults = AnyDefaultsMacros.ObservableDefaultsStorage(store: AnyDefaultsCore.Defaults.standard, prefix: "app.", ignoresExternalChanges: false)
            }

            extension Flags: AnyDefaultsMacros.ObservableDefaults {
            }
            """#)
    }
}
