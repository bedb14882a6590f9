import AnyDefaultsCore
import Foundation
import FuzzerDriver
@testable import AnyDefaultsLMDB

/// Any bytes: the LMDB backend's binary value decoder rejects them with an `BinaryCodecError` or
/// returns a value that encodes and decodes again to the same value; the zero-copy decoder (from
/// a raw buffer, as LMDB hands records) agrees with the array one.
@_cdecl("LLVMFuzzerTestOneInput")
public func fuzzLMDBCodec(_ start: UnsafePointer<UInt8>?, _ count: Int) -> CInt {
    let input = start.map { Array(UnsafeBufferPointer(start: $0, count: count)) } ?? []
    let bytes = input
    let decoded = try? LMDBValueCodec.decode(bytes)
    let fromBuffer = bytes.withUnsafeBytes { try? LMDBValueCodec.decode($0) }
    guard decoded == fromBuffer else { fatalError("the two decoders disagree") }
    if let decoded {
        let encoded = LMDBValueCodec.encode(decoded)
        guard let again = try? LMDBValueCodec.decode(encoded), again == decoded else {
            fatalError("a decoded value does not read back from its own encoding")
        }
    }
    return 0
}

@main
enum Main {
    static func main() { exit(anydefaults_fuzz_main(CommandLine.argc, CommandLine.unsafeArgv, fuzzLMDBCodec)) }
}
