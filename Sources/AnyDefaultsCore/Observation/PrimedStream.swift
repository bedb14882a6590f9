import Synchronization

/// An `AsyncStream` that yields a current value first and then one value per change, built on a
/// provider observation.
///
/// The observation is registered before the current value is read, so that no change is lost
/// between the two; changes that arrive while the current value is being read are held back and
/// only the latest of them is yielded after it (events arrive in commit order, so it is the newest
/// state). A value whose mark (what is stored) equals the one yielded last is not yielded again.
enum PrimedStream {
    /// Makes the stream: `register` subscribes a handler that receives each change as a value and
    /// its mark; `current` reads the value and mark to start with.
    static func make<Element: Sendable, Mark: Equatable & Sendable>(
        _ type: Element.Type = Element.self,
        buffering: DefaultsBufferingPolicy = .default,
        register: (_ offer: @escaping @Sendable (Element, Mark) -> Void) -> DefaultsObservation,
        current: () -> (Element, Mark)
    ) -> AsyncStream<Element> {
        let (stream, continuation) = AsyncStream.makeStream(of: Element.self, bufferingPolicy: buffering.streamPolicy())
        let gate = Gate<Element, Mark>(continuation)
        let observation = register { element, mark in gate.offer(element, mark: mark) }
        continuation.onTermination = { _ in observation.cancel() }
        let (element, mark) = current()
        gate.prime(element, mark: mark)
        return stream
    }

    /// Orders the first value before the changes, and drops repeats.
    private final class Gate<Element: Sendable, Mark: Equatable & Sendable>: Sendable {
        private struct State {
            var primed = false
            var last: Mark?
            var held: (Element, Mark)?
        }

        private let state = Mutex(State())
        private let continuation: AsyncStream<Element>.Continuation

        init(_ continuation: AsyncStream<Element>.Continuation) {
            self.continuation = continuation
        }

        /// A change: yielded unless the stream has not started yet (then held) or it repeats.
        func offer(_ element: Element, mark: Mark) {
            state.withLock { state in
                guard state.primed else {
                    state.held = (element, mark)
                    return
                }
                yield(element, mark: mark, state: &state)
            }
        }

        /// The first value, then the latest change held back meanwhile.
        func prime(_ element: Element, mark: Mark) {
            state.withLock { state in
                continuation.yield(element)
                state.last = mark
                state.primed = true
                if let (element, mark) = state.held {
                    state.held = nil
                    yield(element, mark: mark, state: &state)
                }
            }
        }

        // Yielded under the lock, so that values leave in the order they were decided on;
        // `yield` only appends to the stream's buffer.
        private func yield(_ element: Element, mark: Mark, state: inout State) {
            guard state.last != mark else { return }
            state.last = mark
            continuation.yield(element)
        }
    }
}
