import Foundation
import HybridInferenceCore

#if canImport(FoundationNetworking)
  import FoundationNetworking
#endif

/// Fetches the default service account's access token from the Google
/// Cloud metadata server (`Credential.metadataServer`).
///
/// Plain HTTP to a link-local host is how the metadata server is reached
/// (it has no TLS); the request carries no secret, only `Metadata-Flavor:
/// Google`, which the server requires so that a page the machine fetches
/// cannot be turned into a request for the token. Redirects are never
/// followed: the token comes from this host or not at all.
struct MetadataServer: Sendable {
  /// The host Google's client libraries use.
  static let defaultHost = "metadata.google.internal"
  /// The token's path on it.
  static let tokenPath = "/computeMetadata/v1/instance/service-accounts/default/token"
  /// A token is renewed this long before it expires (or at half its
  /// lifetime, when that is shorter): a request sent just before the expiry
  /// could otherwise arrive with a dead token.
  static let renewalMargin: Duration = .seconds(60)
  /// The token response is a few hundred bytes; anything far larger is not one.
  static let maximumResponseBytes = 64 << 10

  let tokenURL: URL
  let call: RemoteCall

  /// The metadata server at `host` (`host[:port]`, the model's
  /// `GCE_METADATA_HOST`); nil or empty for `metadata.google.internal`.
  /// Nil when that does not make a URL of a host and the token path.
  init?(host: String?, options: RequestOptions) {
    let host = host.flatMap { $0.isEmpty ? nil : $0 } ?? Self.defaultHost
    guard let url = URL(string: "http://\(host)\(Self.tokenPath)"), Origin(url) != nil,
      url.path == Self.tokenPath
    else { return nil }
    tokenURL = url
    var options = options
    options.maximumResponseBytes = Self.maximumResponseBytes
    options.remembersOffline = false
    call = RemoteCall(
      modelName: "metadata server", options: options,
      transport: HTTPTransport(maximumConnectionsPerHost: 2, redirectPolicy: .never),
      reachability: nil
    ) { head, body in
      RemoteErrorMapping.apiError(status: head.statusCode, contentType: head.contentType, body: body, secrets: nil)
    }
  }

  /// The body of the token response.
  private struct TokenResponse: Decodable {
    var accessToken: String
    /// Seconds; read as a number of any size, since it is clamped before use.
    var expiresIn: Double?
    var tokenType: String?

    enum CodingKeys: String, CodingKey {
      case accessToken = "access_token"
      case expiresIn = "expires_in"
      case tokenType = "token_type"
    }
  }

  /// A fresh token; its `renewAt` a margin before its `expires_in`, none
  /// when the server did not say (kept until a 401, as `BearerToken` says).
  func fetch(log: LogHandler) async throws -> BearerToken {
    var request = try RemoteRequest.make(tokenURL, body: String?.none, streaming: false, timeout: call.options.timeout)
    request.setValue("Google", forHTTPHeaderField: "Metadata-Flavor")
    let started = ContinuousClock.now
    let loop = call.retryLoop(log: log, isIdempotent: true)
    let response = try await loop.run { _ in
      try RemoteCall.decode(TokenResponse.self, from: try await call.unary(request, deadline: loop.deadline))
    }
    if let type = response.tokenType, type.lowercased() != "bearer" {
      throw HybridInferenceError.malformedResponse("the token is of type \(ServerText.inert(type, limit: 32))")
    }
    guard let expiresIn = response.expiresIn else {
      return try BearerToken.checked(response.accessToken, renewAt: nil)
    }
    // Bounded: a day at most, so that a token is renewed at least daily and
    // the arithmetic below cannot overflow; negative is a token already due.
    let lifetime = min(WaitLimits.seconds(expiresIn) ?? .zero, .seconds(86_400))
    let margin = min(Self.renewalMargin, lifetime / 2)
    return try BearerToken.checked(response.accessToken, renewAt: started + lifetime - margin)
  }
}
