import Synchronization

// A typed key remembers the read slot (`CacheReadSlot`) of each cache it was read from, so that
// a cached typed read finds its answer without hashing the key: a short list, pushed without a
// lock, never shortened while the key lives (a reader may be walking it). A link whose cache
// went away is given to the next cache the key is read from; a reader never follows a link of
// another cache, and the link of a live cache is never given away, so no reader sees a link
// change under it.

extension DefaultsKeys {
    /// The most links a key keeps; reads through further live caches take the ordinary path.
    private static let rememberedCaches = 8

    /// The slot this key remembers for the cache `cacheID`, if any; valid while that cache and
    /// the key live. Unmanaged, so that the read path counts no references.
    @inline(__always)
    func readSlot(in cacheID: UInt64) -> Unmanaged<CacheReadSlot>? {
        var bits = readSlots.load(ordering: .acquiring)
        while let pointer = UnsafeRawPointer(bitPattern: bits) {
            let (slot, next) = Unmanaged<ReadSlotLink>.fromOpaque(pointer)._withUnsafeGuaranteedRef { link in
                (link.slot(for: cacheID), link.next)
            }
            if let slot { return slot }
            bits = next
        }
        return nil
    }

    /// Remembers `slot`, in the link of a cache that went away or in a new one; `false` when
    /// the key already remembers as many live caches as it may.
    func remember(_ slot: CacheReadSlot) -> Bool {
        var head = readSlots.load(ordering: .acquiring)
        while true {
            if readSlot(in: slot.cacheID) != nil { return true }  // another thread was first
            var bits = head
            var depth = 0
            while let pointer = UnsafeRawPointer(bitPattern: bits) {
                let link = Unmanaged<ReadSlotLink>.fromOpaque(pointer).takeUnretainedValue()
                if link.reuse(for: slot) { return true }
                bits = link.next
                depth += 1
            }
            guard depth < Self.rememberedCaches else { return false }
            let link = Unmanaged.passRetained(ReadSlotLink(slot: slot, next: head))
            let (exchanged, current) = readSlots.compareExchange(
                expected: head, desired: UInt(bitPattern: link.toOpaque()), ordering: .acquiringAndReleasing)
            if exchanged { return true }
            _ = link.takeRetainedValue()
            head = current
        }
    }

    /// Releases the list; when the key goes away.
    func forgetReadSlots() {
        var bits = readSlots.exchange(0, ordering: .acquiring)
        while let pointer = UnsafeRawPointer(bitPattern: bits) {
            let link = Unmanaged<ReadSlotLink>.fromOpaque(pointer).takeRetainedValue()
            bits = link.next
        }
    }
}

/// One element of a key's list of read slots: a cache's identifier and its slot for the key,
/// which the link holds retained.
final class ReadSlotLink: Sendable {
    /// The cache whose slot this is; 0 while the link is being given to another cache.
    private let cacheID: Atomic<UInt64>
    /// The retained slot's address.
    private let slotBits: Atomic<UInt>
    /// The next (older) link's address, or 0.
    let next: UInt

    init(slot: CacheReadSlot, next: UInt) {
        cacheID = Atomic(slot.cacheID)
        slotBits = Atomic(UInt(bitPattern: Unmanaged.passRetained(slot).toOpaque()))
        self.next = next
    }

    deinit {
        if let pointer = UnsafeRawPointer(bitPattern: slotBits.load(ordering: .acquiring)) {
            Unmanaged<CacheReadSlot>.fromOpaque(pointer).release()
        }
    }

    /// The slot, if this link is the one of cache `id`.
    @inline(__always)
    func slot(for id: UInt64) -> Unmanaged<CacheReadSlot>? {
        guard cacheID.load(ordering: .acquiring) == id,
            let pointer = UnsafeRawPointer(bitPattern: slotBits.load(ordering: .acquiring))
        else { return nil }
        return Unmanaged.fromOpaque(pointer)
    }

    /// Takes `slot` in place of the slot of a cache that went away; `false` if the link's cache
    /// lives (or another thread is taking the link).
    func reuse(for slot: CacheReadSlot) -> Bool {
        let id = cacheID.load(ordering: .acquiring)
        guard id != 0, let pointer = UnsafeRawPointer(bitPattern: slotBits.load(ordering: .acquiring)),
            Unmanaged<CacheReadSlot>.fromOpaque(pointer)._withUnsafeGuaranteedRef({ $0.isAbandoned }),
            cacheID.compareExchange(expected: id, desired: 0, ordering: .acquiringAndReleasing).exchanged
        else { return false }
        let old = slotBits.exchange(UInt(bitPattern: Unmanaged.passRetained(slot).toOpaque()), ordering: .acquiringAndReleasing)
        if let oldPointer = UnsafeRawPointer(bitPattern: old) { Unmanaged<CacheReadSlot>.fromOpaque(oldPointer).release() }
        cacheID.store(slot.cacheID, ordering: .releasing)
        return true
    }
}
