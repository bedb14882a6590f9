// The umbrella: one import for the core and every built-in backend this build has. LMDB and
// PostgreSQL come with the package traits of the same names (see Package.swift and
// Docs/Configuration.md); without them, their modules are not built and not exported.
@_exported import AnyDefaultsCore
@_exported import AnyDefaultsMemory
@_exported import AnyDefaultsJSONFile
@_exported import AnyDefaultsUserDefaults
@_exported import AnyDefaultsSQLite
#if canImport(AnyDefaultsLMDB)
@_exported import AnyDefaultsLMDB
#endif
#if canImport(AnyDefaultsPostgreSQL)
@_exported import AnyDefaultsPostgreSQL
#endif
