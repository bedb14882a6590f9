import AnyDefaultsCore
import Foundation
import FuzzerDriver
@testable import AnyDefaultsUserDefaults

/// Any bytes: the binary property-list reader rejects them or returns nodes that the writer
/// writes and the reader reads back to the same values; the suite-file parser (which hands what is
/// not a binary property list to Foundation) returns a dictionary or a damage reason.
@_cdecl("LLVMFuzzerTestOneInput")
public func fuzzPropertyList(_ start: UnsafePointer<UInt8>?, _ count: Int) -> CInt {
    let input = start.map { Array(UnsafeBufferPointer(start: $0, count: count)) } ?? []
    // A valid header, so that most inputs reach the object table.
    let body = input
    let bytes = body.starts(with: BinaryPropertyListReader.magic) ? body : BinaryPropertyListReader.magic + body
    if case .dictionary(let dictionary)? = try? BinaryPropertyListReader.read(bytes) {
        let values = PropertyListNode.values(fromDomain: dictionary)
        let rewritten = [UInt8](BinaryPropertyListWriter.write(values.mapValues(PropertyListNode.init)))
        guard case .dictionary(let again)? = try? BinaryPropertyListReader.read(rewritten),
            PropertyListNode.values(fromDomain: again) == values
        else {
            fatalError("values read from the input do not read back from their own encoding")
        }
    }
    #if !canImport(Darwin)
    _ = PropertyListFile.parse(body)
    #endif
    return 0
}

@main
enum Main {
    static func main() { exit(anydefaults_fuzz_main(CommandLine.argc, CommandLine.unsafeArgv, fuzzPropertyList)) }
}
