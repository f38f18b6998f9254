import HybridInferenceCore

/// How the cloud model talks to the server: how long it waits and how it retries.
///
/// A value set once per `CloudGeminiModel`; the defaults suit Google's API
/// from a desktop or server.
public struct RequestOptions: Sendable, Hashable {
  /// The longest one call may take, every attempt and every wait between
  /// retries included, getting a bearer token from the credential's
  /// provider too; for a stream, until its last event.
  ///
  /// Ran out once the request was on its way: `HybridInferenceError.timedOut`,
  /// whether or not the server had answered anything. The server was
  /// reached, so slow is not offline and a prefer-cloud hybrid throws it.
  /// Ran out while the provider (or the metadata server) was still getting
  /// the token: `.timedOut` too, nothing sent, and the provider's call is
  /// cancelled unless another request still waits for the same token.
  ///
  /// Clamped to 365 days at most (as is every duration the library is given,
  /// before any arithmetic); zero or less is `invalidOptions`, and nothing
  /// is sent.
  public var timeout: Duration
  /// How long connecting (DNS, TCP and TLS) may take before the request is
  /// on its way; exceeding it is `HybridInferenceError.offline`. Clamped
  /// to 365 days at most, and never later than `timeout`; zero or less is
  /// `invalidOptions`.
  public var connectTimeout: Duration
  /// Which failures are tried again, how often and how far apart.
  public var retryPolicy: RetryPolicy
  /// Whether an offline verdict is remembered for the server's origin
  /// (scheme, host, port), shared by every model that talks to it.
  ///
  /// While it holds, a hybrid whose primary is this model goes straight to
  /// its secondary (logged as a fallback, "offline (remembered)") instead of
  /// waiting up to `connectTimeout` on every request. A background TCP
  /// connect to the server, 1 s after the verdict and then backing off to
  /// once a minute, clears it when the server answers; so does any request
  /// that reaches it. The model used on its own is always asked, and throws
  /// `.offline` when it cannot reach its server. On by default; off, nothing
  /// is remembered or probed.
  public var remembersOffline: Bool
  /// The largest body a unary call (`respond`, `countTokens`) or an error
  /// response may have, in bytes; a longer one ends the call with
  /// `HybridInferenceError.responseTooLarge` as soon as the limit is passed.
  ///
  /// Bodies are held in memory whole before they are decoded, so without a
  /// limit a broken or hostile server could grow one until the deadline.
  public var maximumResponseBytes: Int
  /// The largest single event of a stream, in bytes; a longer one ends the
  /// stream with `HybridInferenceError.responseTooLarge`.
  ///
  /// One event is held until its end, so it is bounded like a unary body;
  /// the stream as a whole is bounded by `maximumStreamedResponseBytes`.
  public var maximumEventBytes: Int
  /// The most bytes a streamed answer's body may have, summed over all its
  /// events (their SSE framing included, as the body arrives, after any
  /// content decoding); the first byte past it ends the stream with
  /// `HybridInferenceError.responseTooLarge` and closes the connection.
  /// Zero or less makes every streamed request throw `invalidOptions`
  /// before anything is sent.
  ///
  /// Each event is handed on as it ends, but the answer grows with every
  /// one (the stream's accumulated response, the app's snapshots), so
  /// without a bound a server streaming fast until the deadline could push
  /// gigabytes into the process.
  public var maximumStreamedResponseBytes: Int
  /// The most bytes a request's inline media (`Attachment.image`, `.data`,
  /// and inline parts of earlier turns) may take base64-encoded, summed over
  /// the whole conversation; a request over it is
  /// `HybridInferenceError.requestTooLarge`, and nothing is sent.
  ///
  /// Checked before the body is built, so a huge attachment is refused
  /// without encoding it, and a server's 400 or 413 after a long upload is
  /// not how the app finds out. Files past it go by URI (`Attachment.file`).
  public var maximumInlineMediaBytes: Int
  /// The most TCP connections the model keeps open to its server at once
  /// (every copy of the model shares them); requests beyond it wait for one
  /// to come free. Clamped to 1...1024.
  ///
  /// Set it to the most requests the app has in flight to one server, so
  /// that none waits for a connection while the server could take it.
  public var maximumConnectionsPerHost: Int
  /// Which HTTP client carries the model's requests; `.automatic` unless
  /// there is a reason below to pick `.urlSession`.
  public var transport: Transport

  /// Which HTTP client carries a model's requests.
  ///
  /// On Linux, URLSession (FoundationNetworking, over libcurl) falls far
  /// behind curl, cold and warm, at the request rates of a fleet of
  /// llama-server or vLLM replicas (Benchmarks/RESULTS.md, "Remote clients
  /// at scale"). So plain `http://` servers are spoken
  /// to by the library's own small HTTP/1.1 client: a pool of keep-alive
  /// connections per server, one thread per request in flight, nothing in
  /// between the socket and the stream. `https://` always goes through
  /// URLSession, which does the TLS. That client waits on its sockets with
  /// Linux's epoll: on Darwin, `.automatic` is URLSession for every request.
  public enum Transport: Sendable, Hashable {
    /// The library's HTTP/1.1 client for `http://` servers, URLSession for
    /// `https://`. A plain-http request also goes through URLSession when
    /// the environment names a proxy for its host (`http_proxy`,
    /// `HTTP_PROXY`, `all_proxy`, unless `no_proxy` matches), as libcurl
    /// would send it through that proxy.
    case automatic
    /// URLSession for every request: for a plain-http server that needs
    /// what only libcurl does (a proxy set up other than by the
    /// environment, HTTP/2 over cleartext), or to compare the two clients.
    case urlSession
  }

  /// The default `maximumResponseBytes`: 32 MiB, far above any text answer
  /// (a response with inline images at Gemini's output limits stays below it).
  public static let defaultMaximumResponseBytes = 32 << 20
  /// The default `maximumEventBytes`: 16 MiB.
  public static let defaultMaximumEventBytes = 16 << 20
  /// The default `maximumStreamedResponseBytes`: 64 MiB, twice
  /// `defaultMaximumResponseBytes`, since a stream repeats its framing and
  /// metadata with every event: even a model's longest answer (tens of
  /// thousands of tokens) sent one token to an event stays below it.
  public static let defaultMaximumStreamedResponseBytes = 64 << 20
  /// The default `maximumInlineMediaBytes`: 100 MB (100,000,000 bytes)
  /// encoded, the Gemini API's documented limit for inline data (some
  /// types, PDFs among them, have lower limits of their own, which the
  /// server enforces). OpenAI's own API takes
  /// less per request (about 50 MB); lower it for such a server.
  public static let defaultMaximumInlineMediaBytes = 100_000_000
  /// The default `maximumConnectionsPerHost`.
  public static let defaultMaximumConnectionsPerHost = 32

  /// Options with the given limits.
  /// - Parameters:
  ///   - timeout: The whole call's limit; 300 s by default, room for long
  ///     answers of thinking models.
  ///   - connectTimeout: 15 s by default.
  ///   - retryPolicy: Three attempts with backoff by default.
  ///   - remembersOffline: Whether hybrids skip this server while it is
  ///     known to be offline; true by default.
  ///   - maximumResponseBytes: 32 MiB by default.
  ///   - maximumEventBytes: 16 MiB by default.
  ///   - maximumStreamedResponseBytes: 64 MiB by default.
  ///   - maximumInlineMediaBytes: 100 MB encoded by default.
  ///   - maximumConnectionsPerHost: `defaultMaximumConnectionsPerHost` by default.
  ///   - transport: `.automatic` by default.
  public init(
    timeout: Duration = .seconds(300), connectTimeout: Duration = .seconds(15),
    retryPolicy: RetryPolicy = .default, remembersOffline: Bool = true,
    maximumResponseBytes: Int = RequestOptions.defaultMaximumResponseBytes,
    maximumEventBytes: Int = RequestOptions.defaultMaximumEventBytes,
    maximumStreamedResponseBytes: Int = RequestOptions.defaultMaximumStreamedResponseBytes,
    maximumInlineMediaBytes: Int = RequestOptions.defaultMaximumInlineMediaBytes,
    maximumConnectionsPerHost: Int = RequestOptions.defaultMaximumConnectionsPerHost,
    transport: Transport = .automatic
  ) {
    self.timeout = timeout
    self.connectTimeout = connectTimeout
    self.retryPolicy = retryPolicy
    self.remembersOffline = remembersOffline
    self.maximumResponseBytes = maximumResponseBytes
    self.maximumEventBytes = maximumEventBytes
    self.maximumStreamedResponseBytes = maximumStreamedResponseBytes
    self.maximumInlineMediaBytes = maximumInlineMediaBytes
    self.maximumConnectionsPerHost = maximumConnectionsPerHost
    self.transport = transport
  }
}
