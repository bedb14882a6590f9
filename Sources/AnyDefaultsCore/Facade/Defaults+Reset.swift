// Resetting several typed keys at once: one batch, so that a reader never sees some of them reset
// and others not (on backends with atomic batches).

extension Defaults {
    /// Removes the stored values of `keys` in one batch, so that each reads as its default again.
    ///
    /// ```swift
    /// defaults.reset(.volume, .theme, .layout)
    /// ```
    public func reset<each Value>(_ keys: repeat DefaultsKey<each Value>) {
        var names: [DefaultsKeys] = []
        for key in repeat each keys { names.append(key) }
        reset(names)
    }

    /// Removes the stored values of `keys` in one batch, so that each reads as its default again.
    ///
    /// ```swift
    /// let audioKeys: [DefaultsKeys] = [.volume, .muted]
    /// defaults.reset(audioKeys)
    /// ```
    public func reset(_ keys: [DefaultsKeys]) {
        reporting { () throws(DefaultsError) in try throwing.reset(keys) }
    }
}

extension ThrowingDefaults {
    /// Removes the stored values of `keys` in one batch, so that each reads as its default again.
    ///
    /// ```swift
    /// try defaults.throwing.reset(.volume, .theme)
    /// ```
    public func reset<each Value>(_ keys: repeat DefaultsKey<each Value>) throws(DefaultsError) {
        var names: [DefaultsKeys] = []
        for key in repeat each keys { names.append(key) }
        try reset(names)
    }

    /// Removes the stored values of `keys` in one batch, so that each reads as its default again.
    public func reset(_ keys: [DefaultsKeys]) throws(DefaultsError) {
        let fullKeys = keys.map { defaults.fullKey($0.name) }
        guard !fullKeys.isEmpty else { return }
        try defaults.provider.apply(fullKeys.map { .remove($0) })
        for fullKey in fullKeys { defaults.forgetDecoded(fullKey) }
    }
}
