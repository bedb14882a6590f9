import AnyDefaultsCombine
import Foundation

/// An `ObservableObject` whose only observable properties are `@PublishedDefault`: it declares
/// its `objectWillChange`.
final class AudioModel: ObservableObject {
    let objectWillChange = ObservableObjectPublisher()
    @PublishedDefault var volume: Double
    @PublishedDefault var theme: Theme

    init(store: Defaults, behavior: PublishedDefaultBehavior = .didSet, mock: Bool = false) {
        _volume = PublishedDefault(.volume, store: store, behavior: behavior)
        _theme = PublishedDefault(.theme, store: store, behavior: behavior)
        _volume.mock = mock
        _theme.mock = mock
    }
}

/// An `ObservableObject` with a `@Published` property too: its synthesized `objectWillChange`
/// serves both kinds.
final class PlayerModel: ObservableObject {
    @Published var isPlaying = false
    @PublishedDefault var volume: Double
    @PublishedDefault var nickname: String?

    init(store: Defaults, behavior: PublishedDefaultBehavior = .didSet) {
        _volume = PublishedDefault(.volume, store: store, behavior: behavior)
        _nickname = PublishedDefault("nickname", store: store, behavior: behavior)
    }
}

/// A model for a user interface, isolated to the main actor.
@MainActor final class InterfaceModel: ObservableObject {
    @Published var isEditing = false
    @PublishedDefault var volume: Double
    @PublishedDefault var tags: [String]

    init(store: Defaults) {
        _volume = PublishedDefault(.volume, store: store)
        _tags = PublishedDefault(.tags, store: store, behavior: .willSet)
    }
}

/// A plain class, not an `ObservableObject`.
final class PlainHolder {
    @PublishedDefault var count: Int

    init(store: Defaults) {
        _count = PublishedDefault(.count, store: store)
    }
}
