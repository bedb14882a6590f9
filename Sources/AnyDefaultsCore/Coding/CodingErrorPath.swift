extension DefaultsError {
    /// This error, with `component` (a key or `[index]`) put in front of the path inside the
    /// value that its message names.
    ///
    /// The coder layer words its messages `"Cannot decode T at PATH: reason"`; a collection that
    /// reads its elements, and the facade that knows the defaults key, add the outer parts of
    /// the path as the error travels up. Other messages are left as they are.
    func inside(_ component: String) -> DefaultsError {
        guard let at = message.range(of: " at "),
              let colon = message.range(of: ": ", range: at.upperBound..<message.endIndex)
        else { return self }
        let path = message[at.upperBound..<colon.lowerBound]
        let combined: String
        if path == "the top level" {
            combined = component
        } else if path.hasPrefix("[") {
            combined = component + path
        } else {
            combined = component + "." + path
        }
        var error = self
        error.message.replaceSubrange(at.upperBound..<colon.lowerBound, with: combined)
        return error
    }
}
