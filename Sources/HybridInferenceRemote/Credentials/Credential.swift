import Foundation
import HybridInferenceCore

/// How a remote model proves who is asking: an API key, a bearer token from
/// the app, or the token of the machine's Google Cloud service account.
///
/// ```swift
/// let vertex = CloudGeminiModel(name: "gemini-3.1-flash-lite",
///                               backend: .vertexAI(project: "my-project"),
///                               authorization: .metadataServer)
/// let gateway = OpenAICompatibleModel(name: "m", baseURL: url, apiKey: nil,
///                                     authorization: .bearerToken { try await auth.token() })
/// ```
///
/// Given as `authorization:`, it wins over `apiKey:` and the environment's
/// keys. Tokens travel as `Authorization: Bearer`, only to the model's own
/// origin (a redirect elsewhere is refused) and only over TLS or to this
/// machine; no token, key or provider's output appears in a description,
/// an error or a log line.
///
/// A struct with static members, so that kinds can be added later without
/// breaking a `switch` in an app.
public struct Credential: Sendable, CustomStringConvertible, CustomDebugStringConvertible,
  CustomReflectable
{
  /// Where the secret comes from.
  enum Source: Sendable {
    case apiKey(APIKey?)
    case bearerToken(@Sendable () async throws -> String)
    case metadataServer
  }

  let source: Source

  /// A fixed key: `x-goog-api-key` for the Gemini API, `Authorization:
  /// Bearer` for an OpenAI-compatible server. Vertex AI takes no key on its
  /// project paths, so a key is never sent there (the model is
  /// `.unavailable(.missingCredential)`). An empty key counts as none.
  public static func apiKey(_ key: String) -> Credential {
    Credential(source: .apiKey(APIKey(key)))
  }

  /// A bearer token from `provider` (an OAuth access token, from a service
  /// account, workload identity or your own token service).
  ///
  /// The provider is asked before the first request and the token kept for
  /// the model and its copies; when the server answers 401 the provider is
  /// asked once more and the request sent again with the new token (once per
  /// request). Concurrent requests that meet the same 401 share one call of
  /// the provider. A provider that throws makes the request fail with
  /// `HybridInferenceError.authorizationFailed`, naming it; nothing is sent.
  public static func bearerToken(_ provider: @escaping @Sendable () async throws -> String) -> Credential {
    Credential(source: .bearerToken(provider))
  }

  /// The access token of the machine's default service account, from the
  /// Google Cloud metadata server (Compute Engine, GKE, Cloud Run, Cloud
  /// Functions): `GET http://metadata.google.internal/computeMetadata/v1/
  /// instance/service-accounts/default/token` with `Metadata-Flavor: Google`.
  ///
  /// The token is kept until a minute before it expires (`expires_in`), or
  /// until the server refuses it with 401. `GCE_METADATA_HOST` names another
  /// host (and port), as in Google's own client libraries. Redirects are
  /// never followed. Off Google Cloud the request fails with
  /// `HybridInferenceError.authorizationFailed` naming the metadata server.
  public static var metadataServer: Credential { Credential(source: .metadataServer) }

  /// Whether this is an API key (which Vertex AI does not take).
  package var isAPIKey: Bool {
    if case .apiKey = source { return true }
    return false
  }

  /// The kind of credential, never its secret: "API key", "bearer token
  /// provider" or "metadata server".
  public var description: String {
    switch source {
    case .apiKey(let key): key == nil ? "no API key" : "API key"
    case .bearerToken: "bearer token provider"
    case .metadataServer: "metadata server"
    }
  }

  /// The same as `description`.
  public var debugDescription: String { "Credential(\(description))" }

  /// No children: the key and the provider stay out of `dump`.
  public var customMirror: Mirror { Mirror(self, children: [], displayStyle: .struct) }
}
