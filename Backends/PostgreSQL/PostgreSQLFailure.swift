import AnyDefaultsCore
import PostgresNIO

/// What PostgreSQL or the connection to it reported: the cause of a ``DefaultsError`` of this
/// backend. It holds the SQLSTATE code and the server's primary message, never the query or its
/// parameters (which hold stored values).
public struct PostgreSQLFailure: Error, Sendable, Hashable, CustomStringConvertible {
    /// The SQLSTATE code the server sent, such as `42501` (insufficient privilege); `nil` when the
    /// failure was the connection's or the client's.
    public var sqlState: String?
    /// What failed, in words: the server's primary message, or the client's description.
    public var reason: String

    public var description: String {
        sqlState.map { "\(reason) (SQLSTATE \($0))" } ?? reason
    }

    init(sqlState: String?, reason: String) {
        self.sqlState = sqlState
        self.reason = reason
    }

    init(_ error: any Error) {
        if let error = error as? PSQLError {
            sqlState = error.serverInfo?[.sqlState]
            if let message = error.serverInfo?[.message] {
                reason = message
            } else if error.code == .sslUnsupported {
                reason = "the server does not accept TLS connections (sslmode=require and stricter need TLS; sslmode=prefer falls back to plain TCP)"
            } else if let underlying = error.underlying, let tls = Self.tlsReason(underlying) {
                reason = tls
            } else if let underlying = error.underlying {
                reason = "\(error.code): \(String(describing: underlying))"
            } else {
                reason = "\(error.code)"
            }
        } else if let error = error as? PostgresError {
            // What the prepared-statement API (PreparedQuery) reports.
            switch error {
            case .server(let message):
                sqlState = message.fields[.sqlState]
                reason = message.fields[.message] ?? "the server reported an error"
            case .connectionClosed:
                sqlState = nil
                reason = "the connection was closed"
            case .protocol(let message):
                sqlState = nil
                reason = "protocol error: \(message)"
            }
        } else if let error = error as? PostgresDecodingError {
            sqlState = nil
            reason = "a column of type \(error.postgresType) could not be read (\(error.code))"
        } else {
            sqlState = nil
            reason = String(describing: error)
        }
    }

    /// What a failed TLS handshake means, in words, or `nil` if `error` is not one.
    private static func tlsReason(_ error: any Error) -> String? {
        if let error = error as? NIOSSLExtraError, error == .failedToValidateHostname {
            return "TLS: the server's certificate does not name the host connected to (sslmode=verify-full checks the name; verify-ca does not)"
        }
        guard let error = error as? NIOSSLError else { return nil }
        if case .handshakeFailed(let cause) = error, "\(cause)".contains("CERTIFICATE_VERIFY_FAILED") {
            return "TLS: the server's certificate is not signed by a trusted authority (sslrootcert names the authorities to trust)"
        }
        return "TLS handshake failed: \(error)"
    }

    /// Whether the failure is the connection's (refused, dropped, reset, the server shutting down)
    /// rather than the statement's.
    var isConnectionLoss: Bool {
        if let sqlState {
            // 08: connection exception; 57P01-03: administrator shutdown, crash shutdown, cannot
            // connect now; 53300: too many connections.
            return sqlState.hasPrefix("08") || ["57P01", "57P02", "57P03", "53300"].contains(sqlState)
        }
        return true
    }

    /// The ``DefaultsError`` code for a failure of the server or the statement.
    var code: DefaultsError.Code {
        guard let sqlState else { return .unavailable }
        switch sqlState {
        case "42501": return .permissionDenied
        case _ where sqlState.hasPrefix("28"): return .permissionDenied
        case "3D000", "42P01": return .notFound
        case "53100": return .storageFull
        case "40001", "40P01", "55P03", "57014": return .busy
        case "54000", "22021", "22P05": return .invalidValue
        case _ where isConnectionLoss: return .unavailable
        default: return .ioFailure
        }
    }
}

extension DefaultsError {
    /// An error of the PostgreSQL backend.
    static func postgres(_ code: Code, _ message: String, key: String? = nil, cause: (any Error)? = nil) -> DefaultsError {
        DefaultsError(code, message, backend: PostgreSQLProvider.backend, key: key, cause: cause)
    }

    /// `error` as the backend's error: kept if it is one already, else classified by
    /// ``PostgreSQLFailure``, with `action` (what was being done) leading the message.
    static func postgres(_ error: any Error, while action: String) -> DefaultsError {
        if let error = error as? DefaultsError { return error }
        let failure = PostgreSQLFailure(error)
        return .postgres(failure.code, "\(action) failed: \(failure.reason).", cause: failure)
    }
}
