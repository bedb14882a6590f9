import Foundation

/// Sends the `objectWillChange` of the object a ``PublishedDefault`` property belongs to, when the
/// property's value changes elsewhere (another property or `Defaults` on the key, another
/// process): on the main queue, where SwiftUI and a `@MainActor` object expect it.
///
/// It holds the publisher weakly: the object owns it, and the property must not keep it alive.
// @unchecked Sendable: the only field is a weak reference set once, in `init`; loading a weak
// reference is atomic in the Swift runtime. The publisher is sent on the main queue for changes
// made elsewhere, and on the setter's thread for a set (as `@Published` does); sending it from any
// thread is safe in Combine and OpenCombine (`ObservableObjectPublisher.send()` takes a lock).
final class ObjectWillChangeRelay: @unchecked Sendable {
    private weak var publisher: ObservableObjectPublisher?

    /// A relay to the `objectWillChange` of `object`, if it is an `ObservableObject` whose
    /// publisher is an `ObservableObjectPublisher`.
    init?(for object: AnyObject) {
        guard let observable = object as? any ObservableObject,
              let publisher = Self.objectWillChange(of: observable)
        else { return nil }
        self.publisher = publisher
    }

    private static func objectWillChange(of object: some ObservableObject) -> ObservableObjectPublisher? {
        object.objectWillChange as? ObservableObjectPublisher
    }

    /// Whether the publisher still exists (an object whose `objectWillChange` is made anew on
    /// each access leaves none).
    var isConnected: Bool { publisher != nil }

    /// Sends `objectWillChange` now, on this thread: for a change made through the property.
    func sendNow() {
        publisher?.send()
    }

    /// Sends `objectWillChange` now if this is the main queue (or the main thread), else soon on
    /// the main queue: for a change made elsewhere.
    func sendOnMainQueue() {
        if Self.isOnMainQueue {
            publisher?.send()
        } else {
            DispatchQueue.main.async { [self] in publisher?.send() }
        }
    }

    /// Whether this code runs on the main queue, where the main actor runs. Not the same as the
    /// main thread: where `dispatchMain()` ends the main thread (an async `main` on Linux), a
    /// worker thread drains the main queue.
    static var isOnMainQueue: Bool {
        Thread.isMainThread || DispatchQueue.getSpecific(key: mainQueueKey) == true
    }

    /// A key set on the main queue, made on first use.
    private static let mainQueueKey: DispatchSpecificKey<Bool> = {
        let key = DispatchSpecificKey<Bool>()
        DispatchQueue.main.setSpecific(key: key, value: true)
        return key
    }()
}
