import AnyDefaultsCore

// The LMDB backend's names for the shared binary codec's reader and error
// (Sources/AnyDefaultsCore/Binary), which its records, keys and change log are read with.
typealias LMDBByteReader = BinaryByteReader
package typealias LMDBCodecError = BinaryCodecError
