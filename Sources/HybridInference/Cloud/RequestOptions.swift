/// How the cloud model talks to the server: how long it waits and how it retries.
///
/// A value set once per `CloudGeminiModel`; the defaults suit Google's API
/// from a desktop or server.
public struct RequestOptions: Sendable, Hashable {
  /// The longest one call may take, every attempt and every wait between
  /// retries included; for a stream, until its last event.
  ///
  /// Ran out before the server sent a byte: `HybridInferenceError.offline`
  /// with `URLError(.timedOut)` (the cloud is unreachable in effect, so a
  /// prefer-cloud hybrid may answer on device). Ran out after the response
  /// began: `HybridInferenceError.timedOut`.
  public var timeout: Duration
  /// How long connecting (DNS, TCP and TLS) may take before the request is
  /// on its way; exceeding it is `HybridInferenceError.offline`.
  public var connectTimeout: Duration
  /// Which failures are tried again, how often and how far apart.
  public var retryPolicy: RetryPolicy

  /// Options with the given limits.
  /// - Parameters:
  ///   - timeout: The whole call's limit; 300 s by default, room for long
  ///     answers of thinking models.
  ///   - connectTimeout: 15 s by default.
  ///   - retryPolicy: Three attempts with backoff by default.
  public init(
    timeout: Duration = .seconds(300), connectTimeout: Duration = .seconds(15),
    retryPolicy: RetryPolicy = .default
  ) {
    self.timeout = timeout
    self.connectTimeout = connectTimeout
    self.retryPolicy = retryPolicy
  }
}
