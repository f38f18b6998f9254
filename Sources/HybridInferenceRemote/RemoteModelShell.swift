import Foundation
import HybridInferenceCore

/// What every remote model value holds and answers the same way, whatever
/// protocol it speaks: its name, server, options, credential and transport; the
/// reachability reporter of its origin and the offline verdict that follows
/// from it; and the pieces of its descriptions, with the key redacted.
///
/// Why one type: `CloudGeminiModel` and `OpenAICompatibleModel` each built
/// these by hand, line for line. A rule about the key (never shown) or the
/// offline memory (keyed by origin) written twice could drift apart; here it
/// is written once and each backend adds only its own protocol.
package struct RemoteModelShell: Sendable {
  /// The model as the server knows it; named in retry log lines.
  package let name: String
  /// The server (a backend's base URL, shown without credentials).
  package let baseURL: URL
  /// Timeouts, retries and size limits.
  package let requestOptions: RequestOptions
  /// Signs each request with the model's credential; nil without one.
  package let authorizer: RemoteAuthorizer?
  /// The URL session every copy of the model shares.
  package let transport: HTTPTransport

  /// The shell of a model that signs with `credential` (nil, or an empty
  /// key: no credential).
  /// - Parameters:
  ///   - keyPlacement: Where this backend puts an API key.
  ///   - environment: Read for `GCE_METADATA_HOST` (`Credential.metadataServer`).
  ///   - log: Where retries of a metadata token fetch are reported.
  package init(
    name: String, baseURL: URL, requestOptions: RequestOptions, credential: Credential?,
    keyPlacement: RemoteAuthorizer.KeyPlacement, environment: [String: String], log: LogHandler
  ) {
    self.name = name
    self.baseURL = baseURL
    self.requestOptions = requestOptions
    self.authorizer = credential.flatMap {
      RemoteAuthorizer(
        $0, keyPlacement: keyPlacement, metadataHost: environment["GCE_METADATA_HOST"], options: requestOptions,
        log: log)
    }
    self.transport = HTTPTransport(
      maximumConnectionsPerHost: requestOptions.maximumConnectionsPerHost, transport: requestOptions.transport)
  }

  /// The key, when the credential is one.
  package var apiKey: APIKey? { authorizer?.apiKey }

  /// What requests report to the process's reachability memory about the
  /// base URL's origin; nil when `RequestOptions.remembersOffline` is off or
  /// the URL has no origin.
  package var reachability: ReachabilityMemory.Reporter? {
    guard requestOptions.remembersOffline, let origin = Origin(baseURL) else { return nil }
    return ReachabilityMemory.Reporter(
      memory: .shared, origin: origin, probeTimeout: requestOptions.connectTimeout)
  }

  /// Where this model's rate limits are remembered: per origin,
  /// model and credential, so another key or token on the same server is
  /// asked as usual.
  package var rateLimits: RateLimitMemory.Reporter? {
    Origin(baseURL).map { origin in
      RateLimitMemory.Reporter(
        memory: .shared, key: RateLimitMemory.Key(origin: origin, model: name, credential: authorizer))
    }
  }

  /// `.offline` while the origin is remembered as offline; nil otherwise.
  /// Never waits.
  package var rememberedOffline: (any Error)? {
    guard let reporter = reachability, let error = reporter.memory.verdict(for: reporter.origin) else {
      return nil
    }
    return HybridInferenceError.offline(error)
  }

  /// The shared exchange for this model, with the backend's error mapping
  /// (`apiError` gets the response's head and bounded body, and the
  /// authorizer to redact the credential with).
  package func call(
    apiError: @escaping @Sendable (ResponseHead, Data, RemoteAuthorizer?) -> HybridInferenceError
  ) -> RemoteCall {
    let secrets = authorizer
    return RemoteCall(
      modelName: name, options: requestOptions, transport: transport, reachability: reachability,
      authorizer: authorizer, rateLimits: rateLimits
    ) { head, body in apiError(head, body, secrets) }
  }

  /// The base URL as descriptions show it: no user, password or query.
  package var displayedBaseURL: String { RemoteURL.display(baseURL) }

  /// `Type(name, server, API key set)` (or the credential's kind, "bearer
  /// token provider"); `absentKey` is the backend's word for no credential
  /// ("missing" where one is needed, "none" where it is optional).
  package func description(of type: String, server: String, absentKey: String) -> String {
    "\(type)(\(name), \(server), \(credentialSummary(absentKey: absentKey)))"
  }

  private func credentialSummary(absentKey: String) -> String {
    guard let authorizer else { return "API key \(absentKey)" }
    return authorizer.usesTokens ? authorizer.kind : "API key set"
  }

  /// `Type(name: ..., baseURL: ..., <fields>, apiKey: <redacted>, timeout: ...)`.
  package func debugDescription(
    of type: String, fields: KeyValuePairs<String, String> = [:], absentKey: String
  ) -> String {
    let options = requestOptions
    var parts = ["name: \(name)", "baseURL: \(displayedBaseURL)"]
    parts += fields.map { "\($0.key): \($0.value)" }
    parts += [
      "apiKey: \(redactedKey(absent: absentKey))",
      "authorization: \(authorizer?.kind ?? "none")", "timeout: \(options.timeout)",
      "connectTimeout: \(options.connectTimeout)", "maxAttempts: \(options.retryPolicy.maxAttempts)",
    ]
    return "\(type)(\(parts.joined(separator: ", ")))"
  }

  /// The children of a model's mirror: name, base URL, `fields`, the key
  /// redacted, the request options, then `trailing`; what `dump` and
  /// debuggers show, so a crash report stays safe.
  package func mirrorChildren(
    fields: KeyValuePairs<String, Any> = [:], trailing: KeyValuePairs<String, Any> = [:],
    absentKey: String
  ) -> [Mirror.Child] {
    var children: [Mirror.Child] = [("name", name), ("baseURL", displayedBaseURL)]
    children += fields.map { (label: Optional($0.key), value: $0.value) }
    children += [
      ("apiKey", redactedKey(absent: absentKey)), ("authorization", authorizer?.kind ?? "none"),
      ("requestOptions", requestOptions),
    ]
    children += trailing.map { (label: Optional($0.key), value: $0.value) }
    return children
  }

  private func redactedKey(absent: String) -> String {
    apiKey == nil ? "<\(absent)>" : "<redacted>"
  }
}
