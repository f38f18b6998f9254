import Foundation
import HybridInferenceCore

#if canImport(FoundationNetworking)
  import FoundationNetworking
#endif

/// How one model's requests are signed: a `Credential` made ready for its
/// backend (where a key goes, which token cache serves the model and its
/// copies), applied to each request just before it is sent.
///
/// Signing per attempt rather than once per call is what lets a 401 be
/// answered with a fresh token (`RemoteCall`), and lets a token that expired
/// during a retry's wait be renewed before the next attempt.
package struct RemoteAuthorizer: Sendable, SecretRedacting {
  /// Where an API key travels.
  package enum KeyPlacement: Sendable, Hashable {
    /// In a header of its own (`x-goog-api-key`).
    case header(String)
    /// As `Authorization: Bearer <key>` (the OpenAI protocol).
    case bearer
  }

  private enum Signer: Sendable {
    case key(APIKey, KeyPlacement)
    case tokens(TokenCache, name: String)
  }

  private let signer: Signer
  /// What the credential is, for descriptions: "API key", "bearer token
  /// provider", "metadata server".
  package let kind: String

  /// The credential's secret as sent: the key, or the token of one attempt.
  struct Grant: Sendable {
    let token: BearerToken?
  }

  /// The signer for `credential`; nil for an empty key (no credential).
  /// - Parameters:
  ///   - keyPlacement: Where this backend puts an API key.
  ///   - metadataHost: The metadata server's `host[:port]` (the model
  ///     passes `GCE_METADATA_HOST`); nil or empty for Google's host.
  ///   - options: The model's timeouts, for fetching a metadata token.
  ///   - log: Where retries of that fetch are reported.
  init?(
    _ credential: Credential, keyPlacement: KeyPlacement, metadataHost: String?,
    options: RequestOptions, log: LogHandler
  ) {
    kind = credential.description
    switch credential.source {
    case .apiKey(let key):
      guard let key else { return nil }
      signer = .key(key, keyPlacement)
    case .bearerToken(let provider):
      let name = "bearer token provider"
      signer = .tokens(
        TokenCache {
          do {
            return try BearerToken.checked(try await provider(), renewAt: nil)
          } catch is CancellationError {
            throw CancellationError()
          } catch {
            throw HybridInferenceError.authorizationFailed(credential: name, error: error)
          }
        }, name: name)
    case .metadataServer:
      let name = "metadata server"
      let server = MetadataServer(host: metadataHost, options: options)
      signer = .tokens(
        TokenCache {
          do {
            guard let server else {
              throw HybridInferenceError.invalidOptions("GCE_METADATA_HOST is not a host[:port]")
            }
            return try await server.fetch(log: log)
          } catch is CancellationError {
            throw CancellationError()
          } catch {
            throw HybridInferenceError.authorizationFailed(credential: name, error: error)
          }
        }, name: name)
    }
  }

  /// The key, when the credential is one.
  package var apiKey: APIKey? {
    if case .key(let key, _) = signer { return key }
    return nil
  }

  /// Which credential this is, for keying what is remembered per credential
  /// (rate limits) without keeping the secret: a key's hash, or the token
  /// cache's own `id` (tokens rotate; the provider behind them does not).
  package var identity: Int {
    switch signer {
    case .key(let key, _):
      var hasher = Hasher()
      hasher.combine(key.value)
      return hasher.finalize()
    case .tokens(let cache, _):
      return cache.id.hashValue
    }
  }

  /// Whether requests carry bearer tokens (not a key): then Google wants
  /// `x-goog-user-project` to name the project billed.
  package var usesTokens: Bool {
    if case .tokens = signer { return true }
    return false
  }

  /// Puts the credential on `request`; returns what was sent.
  /// - Parameters:
  ///   - deadline: When waiting for a token ends, with `timedOut` thrown.
  ///   - timedOut: The error of a token that did not come by `deadline`.
  func sign(
    _ request: inout URLRequest, deadline: ContinuousClock.Instant, timedOut: HybridInferenceError
  ) async throws -> Grant {
    switch signer {
    case .key(let key, .header(let name)):
      request.setValue(key.value, forHTTPHeaderField: name)
      return Grant(token: nil)
    case .key(let key, .bearer):
      request.setValue("Bearer \(key.value)", forHTTPHeaderField: "Authorization")
      return Grant(token: nil)
    case .tokens(let cache, _):
      let token = try await cache.token(deadline: deadline, timedOut: timedOut)
      request.setValue("Bearer \(token.secret.value)", forHTTPHeaderField: "Authorization")
      return Grant(token: token)
    }
  }

  /// Signs `request` again after the server refused `grant` with 401, with
  /// a token other than the refused one; nil when there is none to get (a
  /// key cannot be renewed). The deadline as `sign`'s.
  func resign(
    _ request: inout URLRequest, refused grant: Grant, deadline: ContinuousClock.Instant,
    timedOut: HybridInferenceError
  ) async throws -> Grant? {
    guard case .tokens(let cache, _) = signer, let refused = grant.token else { return nil }
    let token = try await cache.token(replacing: refused, deadline: deadline, timedOut: timedOut)
    request.setValue("Bearer \(token.secret.value)", forHTTPHeaderField: "Authorization")
    return Grant(token: token)
  }

  /// `text` with the key, and every token this model has been given lately,
  /// replaced: a server message may quote what it was sent.
  package func redact(_ text: String) -> String {
    switch signer {
    case .key(let key, _): key.redact(text)
    case .tokens(let cache, _): cache.issued.withLock { $0 }.reduce(text) { $1.redact($0) }
    }
  }
}
