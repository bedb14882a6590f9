// The C library, imported once for the whole package: every file that calls the operating system
// (open, flock, fsync, rename, mmap, ...) imports this module instead of choosing a C library
// itself. `scripts/portability-check` fails on a C-library import anywhere else.
//
// Not a product: the package's own targets use it; apps never see it.

#if canImport(Glibc)
@_exported import Glibc
#elseif canImport(Musl)
@_exported import Musl
#elseif canImport(Darwin)
@_exported import Darwin
#else
#error("AnyDefaults needs a POSIX C library: Glibc or Musl (Linux) or Darwin (Apple platforms).")
#endif

/// A number that differs between threads alive at the same time (the thread's `pthread_t`).
@inline(__always)
public func currentThreadToken() -> UInt {
    #if canImport(Glibc)
    UInt(pthread_self())
    #else
    UInt(bitPattern: pthread_self())
    #endif
}
