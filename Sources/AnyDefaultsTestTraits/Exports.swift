// A test target that adds this product gets `Defaults` and the backends with the trait.
@_exported import AnyDefaults
