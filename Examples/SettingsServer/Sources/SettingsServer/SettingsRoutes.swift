import AnyDefaults
import Foundation
import HTTPTypes
import Hummingbird
import ServiceLifecycle

/// The service's routes, over one store; each tenant is a scoped view (`tenant/{name}/`).
struct SettingsRoutes: Sendable {
    let defaults: Defaults

    func register(on router: Router<BasicRequestContext>) {
        let tenants = router.group("tenants/:tenant")
        tenants.get("settings/:key") { request, context in try self.read(request, context) }
        tenants.put("settings/:key") { request, context in try await self.write(request, context) }
        tenants.delete("settings/:key") { request, context in try await self.remove(request, context) }
        tenants.get("settings") { request, context in try self.list(request, context) }
        tenants.post("batch") { request, context in try await self.batch(request, context) }
        tenants.get("events") { request, context in try self.events(request, context) }
    }

    /// The tenant's view of the store. A tenant name is one path segment, so no tenant's prefix
    /// is the start of another's (`tenant/acme/` is not under `tenant/acm/`).
    func tenant(_ context: BasicRequestContext) throws -> Defaults {
        let name = try context.parameters.require("tenant")
        guard !name.isEmpty, !name.contains("/") else { throw HTTPError(.badRequest, message: "A tenant is one path segment.") }
        return defaults.scoped("tenant/\(name)/")
    }

    func key(_ context: BasicRequestContext) throws -> String {
        let raw = try context.parameters.require("key")
        return raw.removingPercentEncoding ?? raw
    }

    // MARK: One key

    func read(_ request: Request, _ context: BasicRequestContext) throws -> Response {
        let store = try tenant(context)
        let key = try key(context)
        let value = try mapped { () throws(DefaultsError) in try store.throwing.value(forKey: key) }
        guard let value else { return Response(status: .notFound) }
        return json(ExactJSON.string(from: value, layout: .oneLine))
    }

    func write(_ request: Request, _ context: BasicRequestContext) async throws -> Response {
        let store = try tenant(context)
        let key = try key(context)
        let body = try await request.body.collect(upTo: 1 << 20)
        let value = try mapped { () throws(DefaultsError) in try ExactJSON.value(from: body.getString(at: body.readerIndex, length: body.readableBytes) ?? "") }
        // The async write API: the task suspends while the store writes (an fsync, a round trip),
        // instead of holding a thread of Swift concurrency's pool.
        try await mapped { () async throws(DefaultsError) in try await store.async.set(value, forKey: key) }
        return Response(status: .noContent)
    }

    func remove(_ request: Request, _ context: BasicRequestContext) async throws -> Response {
        let store = try tenant(context)
        let key = try key(context)
        let existed = try await mapped { () async throws(DefaultsError) in try await store.async.removeValueIfPresent(forKey: key) }
        return Response(status: existed ? .noContent : .notFound)
    }

    // MARK: The tenant

    func list(_ request: Request, _ context: BasicRequestContext) throws -> Response {
        let store = try tenant(context)
        // One prefix query of the store's index: the tenant's keys only, read at one moment.
        let snapshot = try mapped { () throws(DefaultsError) in try store.throwing.snapshot() }
        return json(String(decoding: ExactJSON.data(from: snapshot.values, layout: .oneLine), as: UTF8.self))
    }

    /// The body of a batch: values in exact JSON (DefaultsValue is Codable with that mapping).
    struct Batch: Decodable {
        var set: [String: DefaultsValue]?
        var remove: [String]?
    }

    func batch(_ request: Request, _ context: BasicRequestContext) async throws -> Response {
        let store = try tenant(context)
        let body = try await request.body.collect(upTo: 1 << 20)
        let batch: Batch
        do {
            batch = try JSONDecoder().decode(Batch.self, from: Data(body.readableBytesView))
        } catch {
            throw HTTPError(.badRequest, message: "The body is {\"set\": {key: value}, \"remove\": [key]}.")
        }
        try await mapped { () async throws(DefaultsError) in
            try await store.async.write { tx in
                for (key, value) in batch.set ?? [:] { tx.set(value, forKey: key) }
                for key in batch.remove ?? [] { tx.removeObject(forKey: key) }
            }
        }
        return Response(status: .noContent)
    }

    // MARK: Change events

    /// Server-sent events: `id` is the change's position, `data` the key and its new value.
    /// A client reconnecting with `Last-Event-ID` gets what it missed from the store's change
    /// history; when the history no longer holds it, a `reset` event with every setting first.
    func events(_ request: Request, _ context: BasicRequestContext) throws -> Response {
        let store = try tenant(context)
        let last = request.headers[.lastEventID].flatMap(DefaultsChangePosition.init)
        let changes = store.changes(after: last, limit: 1024)
        let reset: String? =
            changes.isResumed
            ? nil : String(decoding: ExactJSON.data(from: store.snapshot().values, layout: .oneLine), as: UTF8.self)
        let body = ResponseBody { writer in
            if let reset {
                try await writer.write(ByteBuffer(string: "id: \(changes.start)\nevent: reset\ndata: \(reset.trimmingCharacters(in: .newlines))\n\n"))
            }
            // A stream never ends by itself: end it when the server shuts down (SIGTERM), or the
            // graceful shutdown would wait for every connected client.
            for await event in changes.events.cancelOnGracefulShutdown() {
                let value = event.newValue.map { ExactJSON.string(from: $0, layout: .oneLine) } ?? "null"
                let key = ExactJSON.string(from: .string(event.key), layout: .oneLine)
                let text = "id: \(store.position(of: event))\nevent: change\ndata: {\"key\":\(key),\"value\":\(value)}\n\n"
                try await writer.write(ByteBuffer(string: text))
            }
            // The stream ended: the client fell behind or the server stops; the client reconnects
            // with its Last-Event-ID.
            try await writer.finish(nil)
        }
        var headers = HTTPFields()
        headers[.contentType] = "text/event-stream"
        headers[.cacheControl] = "no-cache"
        return Response(status: .ok, headers: headers, body: body)
    }

    // MARK: Helpers

    func json(_ text: String) -> Response {
        var headers = HTTPFields()
        headers[.contentType] = "application/json"
        return Response(status: .ok, headers: headers, body: ResponseBody(byteBuffer: ByteBuffer(string: text)))
    }

    /// Runs `body`, turning a ``DefaultsError`` into the response its kind calls for.
    func mapped<T>(_ body: () throws(DefaultsError) -> T) throws -> T {
        do {
            return try body()
        } catch {
            throw HTTPError(error)
        }
    }

    /// ``mapped(_:)`` for async work.
    func mapped<T>(_ body: () async throws(DefaultsError) -> T) async throws -> T {
        do {
            return try await body()
        } catch {
            throw HTTPError(error)
        }
    }
}

extension HTTPError {
    /// The response for a store's error, by its kind (Docs/Server.md): the caller's fault is 400,
    /// a transient condition 503 (retry), a full store 507, any other state of the store 500.
    /// The message never holds a stored value (DefaultsError's never does).
    init(_ error: DefaultsError) {
        switch error.kind {
        case .callerFault: self.init(.badRequest, message: error.message)
        case .transient: self.init(.serviceUnavailable, headers: [.retryAfter: "1"], message: error.message)
        case .storeState where error.code == .storageFull: self.init(HTTPResponse.Status(code: 507, reasonPhrase: "Insufficient Storage"), message: error.message)
        case .storeState, .internalFailure: self.init(.internalServerError, message: error.message)
        }
    }
}

extension HTTPField.Name {
    static let lastEventID = Self("Last-Event-ID")!
}
