import AnyDefaultsCore
import AnyDefaultsJSONFile
import Foundation
import FuzzerDriver

/// Any bytes: reading a store or a value throws a `DefaultsError` or returns something that
/// writes back and reads again to the same thing (the encoding is exact).
@_cdecl("LLVMFuzzerTestOneInput")
public func fuzzJSON(_ start: UnsafePointer<UInt8>?, _ count: Int) -> CInt {
    let input = start.map { Array(UnsafeBufferPointer(start: $0, count: count)) } ?? []
    let data = Data(input)
    if let store = try? ExactJSON.store(from: data) {
        let written = ExactJSON.data(from: store)
        guard let again = try? ExactJSON.store(from: written), again == store else {
            fatalError("a store read from the input does not read back from its own encoding")
        }
    }
    let text = String(decoding: data, as: UTF8.self)
    if let value = try? ExactJSON.value(from: text) {
        let written = ExactJSON.string(from: value)
        guard let again = try? ExactJSON.value(from: written), again == value else {
            fatalError("a value read from the input does not read back from its own encoding")
        }
    }
    return 0
}

@main
enum Main {
    static func main() { exit(anydefaults_fuzz_main(CommandLine.argc, CommandLine.unsafeArgv, fuzzJSON)) }
}
