import AnyDefaults
import Foundation
import FuzzerDriver

/// Any text: parsing a store string throws `invalidConfiguration` or gives a configuration whose
/// canonical string parses back to it; validating it against the standard registry and reading its
/// options throw typed errors or succeed. Nothing is opened.
@_cdecl("LLVMFuzzerTestOneInput")
public func fuzzConfiguration(_ start: UnsafePointer<UInt8>?, _ count: Int) -> CInt {
    let input = start.map { Array(UnsafeBufferPointer(start: $0, count: count)) } ?? []
    let text = String(decoding: input, as: UTF8.self)
    let configuration: StoreConfiguration
    do {
        configuration = try StoreConfiguration(parsing: text)
    } catch {
        guard error.code == .invalidConfiguration else { fatalError("parsing threw \(error.code)") }
        return 0
    }
    guard let again = try? StoreConfiguration(parsing: configuration.description), again == configuration else {
        fatalError("the canonical string of a configuration does not parse back to it")
    }
    _ = try? ProviderRegistry.standard.validate(configuration)
    for name in configuration.options.keys {
        _ = try? configuration.intOption(name, in: 0...86_400, default: 0)
        _ = try? configuration.byteCountOption(name, default: 0)
        _ = try? configuration.boolOption(name, default: false)
        _ = try? configuration.option(name, choices: ["a": 1, "b": 2], default: 0)
    }
    return 0
}

@main
enum Main {
    static func main() { exit(anydefaults_fuzz_main(CommandLine.argc, CommandLine.unsafeArgv, fuzzConfiguration)) }
}
