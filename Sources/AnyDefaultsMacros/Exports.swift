// One import for macro users: the macros, and AnyDefaults (the core and every built-in backend)
// that their expansions use.
@_exported import AnyDefaults
