import AnyDefaults
import Foundation
import Hummingbird

// A per-tenant settings service over any AnyDefaults store (Docs/Server.md explains each choice):
//
//   GET    /tenants/{tenant}/settings/{key}   the value, as exact JSON (404 if absent)
//   PUT    /tenants/{tenant}/settings/{key}   stores the body, exact JSON (204)
//   DELETE /tenants/{tenant}/settings/{key}   204 if it was there, 404 if not (one atomic step)
//   GET    /tenants/{tenant}/settings         every setting of the tenant (a prefix query)
//   POST   /tenants/{tenant}/batch            {"set": {key: value}, "remove": [key]}, all or nothing
//   GET    /tenants/{tenant}/events           server-sent change events; Last-Event-ID resumes
//
// Run: swift run SettingsServer --store sqlite:/tmp/settings.sqlite --port 8080

let arguments = CommandLine.arguments
func option(_ name: String, default fallback: String) -> String {
    guard let index = arguments.firstIndex(of: name), index + 1 < arguments.count else { return fallback }
    return arguments[index + 1]
}

let store = option("--store", default: "sqlite:settings.sqlite")
let port = Int(option("--port", default: "8080")) ?? 8080
let defaults = try Defaults(url: store)
// Keep the newest changes in memory, so that a client reconnecting with Last-Event-ID resumes.
defaults.retainChangeHistory(4096)

let router = Router()
let settings = SettingsRoutes(defaults: defaults)
settings.register(on: router)

let app = Application(router: router, configuration: .init(address: .hostname("127.0.0.1", port: port)))
print("SettingsServer on 127.0.0.1:\(port), store \(store)")
try await app.runService()
