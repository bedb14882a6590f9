// The umbrella: one import for the core and every built-in backend.
@_exported import AnyDefaultsCore
@_exported import AnyDefaultsMemory
@_exported import AnyDefaultsJSONFile
@_exported import AnyDefaultsUserDefaults
@_exported import AnyDefaultsSQLite
@_exported import AnyDefaultsLMDB
@_exported import AnyDefaultsPostgreSQL
