// One import for publishers over any store: the framework with its backends, and Combine where
// the platform has it, else OpenCombine (the same API, open source) with its Dispatch schedulers.
@_exported import AnyDefaults

#if canImport(Combine)
@_exported import Combine

/// Combine's `Publisher` protocol, named so that types called `Publisher` can conform to it.
public typealias CombinePublisher = Combine.Publisher
#elseif canImport(OpenCombine)
@_exported import OpenCombine
@_exported import OpenCombineDispatch

/// OpenCombine's `Publisher` protocol, named so that types called `Publisher` can conform to it.
public typealias CombinePublisher = OpenCombine.Publisher
#else
#error("AnyDefaultsCombine needs Combine or OpenCombine")
#endif
