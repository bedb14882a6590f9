extension DefaultsValue: CustomStringConvertible {
    /// The value as one line of exact JSON (``ExactJSON``, layout ``ExactJSON/Layout/oneLine``):
    /// `1` is an int and `1.0` a double, and dates, data and non-finite doubles are tagged, so
    /// the text names the value and its type exactly and reads back with
    /// `ExactJSON.value(from:)`.
    ///
    /// ```swift
    /// print(DefaultsValue.dictionary(["size": .double(12), "tags": ["a"]]))   // {"size":12.0,"tags":["a"]}
    /// ```
    public var description: String {
        ExactJSON.string(from: self, layout: .oneLine)
    }
}
