import Foundation
import HybridInferenceCore
import HybridInferenceRemote

/// A model behind any server that speaks the OpenAI chat-completions
/// protocol: llama-server, vLLM, Ollama, LM Studio, a gateway in front of a
/// fleet of them, or OpenAI itself.
///
/// ```swift
/// let fleet = OpenAICompatibleModel(name: "smollm2",
///                                   baseURL: URL(string: "http://127.0.0.1:8080/v1")!,
///                                   apiKey: nil)           // else OPENAI_API_KEY
/// let tiered = GenerativeModelSession(
///   model: .hybridModel(primary: local, secondary: .hybridModel(primary: fleet, secondary: cloud)))
/// ```
///
/// It is placed `.cloud`: a remote server, from which only being offline
/// falls back (connection refused, DNS, the connect timeout; remembered per
/// origin like Gemini's, see `RequestOptions.remembersOffline`). It reads
/// the `gemini` half of the options, the cloud half of a hybrid's.
///
/// Everything below the protocol is the Gemini client's own code, shared:
/// the streaming transport (timeouts, same-origin redirects), the SSE
/// parser, the retry loop (408, 429, 5xx, honouring `Retry-After`), the
/// offline rules and memory, the size limits. The key (or the token of
/// `authorization: .bearerToken { ... }` / `.metadataServer`, say for Vertex
/// AI's OpenAI-compatible endpoint) is sent as `Authorization: Bearer` and
/// never appears in a URL, a log line, an error or a description; with a
/// credential, a plain `http://` base URL is refused unless it is this machine.
///
/// A value: copies share one URL session, released with the last copy.
public struct OpenAICompatibleModel: LanguageModel {
  /// The model as the server knows it; sent as `model` with every request,
  /// and the `modelVersion` when the server does not name itself.
  public let name: String
  /// The API root, version included (`http://127.0.0.1:8080/v1`,
  /// `http://localhost:11434/v1`, `https://api.openai.com/v1`).
  public let baseURL: URL
  /// Timeouts, retries and size limits.
  public let requestOptions: RequestOptions
  /// Whether the server needs a credential: then a missing key (and no
  /// `authorization`) makes the model `.unavailable(.missingAPIKey)`.
  /// Self-hosted servers mostly need none.
  public let requiresAPIKey: Bool
  /// Where `prepare()` reports retries; requests from a session report
  /// through the session's handler.
  public let logHandler: LogHandler
  /// Name, server, options, key and transport, as every remote model holds them.
  let shell: RemoteModelShell
  var apiKey: APIKey? { shell.apiKey }

  /// A model on an OpenAI-compatible server.
  /// - Parameters:
  ///   - name: The model id the server serves (`GET /models` lists them;
  ///     llama-server answers with its one model whatever the name).
  ///   - baseURL: The API root, with its version path (`.../v1`).
  ///   - apiKey: The key; nil reads `OPENAI_API_KEY`, and without either
  ///     (or `authorization`) no `Authorization` header is sent.
  ///   - authorization: The credential; given, it wins over `apiKey` and
  ///     the environment.
  ///   - requestOptions: Timeouts, retries and size limits.
  ///   - requiresAPIKey: Whether a missing key makes the model unavailable.
  ///   - logHandler: Where `prepare()` reports retries.
  public init(
    name: String, baseURL: URL, apiKey: String?, authorization: Credential? = nil,
    requestOptions: RequestOptions = RequestOptions(), requiresAPIKey: Bool = false,
    logHandler: LogHandler = .standardError
  ) {
    self.init(
      name: name, baseURL: baseURL, apiKey: apiKey, authorization: authorization,
      requestOptions: requestOptions, requiresAPIKey: requiresAPIKey, logHandler: logHandler,
      environment: ProcessInfo.processInfo.environment)
  }

  /// The designated initializer, with the environment passed in so tests can
  /// check the fallback without touching the process's own.
  init(
    name: String, baseURL: URL, apiKey: String?, authorization: Credential? = nil,
    requestOptions: RequestOptions, requiresAPIKey: Bool, logHandler: LogHandler,
    environment: [String: String]
  ) {
    self.name = name
    self.baseURL = baseURL
    self.requestOptions = requestOptions
    self.requiresAPIKey = requiresAPIKey
    self.logHandler = logHandler
    let credential =
      authorization ?? (APIKey(apiKey) ?? APIKey(environment["OPENAI_API_KEY"])).map { .apiKey($0.value) }
    self.shell = RemoteModelShell(
      name: name, baseURL: baseURL, requestOptions: requestOptions, credential: credential, keyPlacement: .bearer,
      environment: environment, log: logHandler)
    self.client = OpenAIClient(shell: shell, endpoint: OpenAIEndpoint(baseURL: baseURL))
  }

  /// The model name; each response carries the server's own `model` instead
  /// when it sends one.
  public var modelVersion: String { name }

  /// Always `.cloud`: only being offline lets a hybrid fall back from it.
  public var placement: ModelPlacement { .cloud }

  /// `.available` unless the base URL cannot be used
  /// (`.unavailable(.invalidBaseURL)`) or a required key is missing
  /// (`.unavailable(.missingAPIKey)`). Never touches the network; `prepare()`
  /// asks the server.
  public var availability: Availability {
    if endpoint.url("chat/completions") == nil { return .unavailable(.invalidBaseURL) }
    if requiresAPIKey, shell.authorizer == nil { return .unavailable(.missingAPIKey) }
    return .available
  }

  /// `.offline` while this server's origin is remembered as offline, else
  /// the 429 while this server, model and key are remembered as rate limited
  /// (a 429 with a `Retry-After`, for that long), so that a hybrid with
  /// another model at hand goes straight to it (the rate limit only under a
  /// policy that falls back on `.rateLimited`); nil otherwise. Never waits.
  public var rememberedFailure: (any Error)? {
    shell.rememberedOffline ?? shell.rateLimits?.verdict
  }

  /// Forgets a remembered rate limit of this server, model and credential,
  /// so that the next request asks the server again even inside a hybrid
  /// that would otherwise go straight to its other model.
  public func clearRememberedRateLimit() {
    shell.rateLimits?.answered()
  }

  /// Asks the server which models it serves (`GET /models`) and returns
  /// their ids: an optional readiness probe before the first request, which
  /// throws the typed error (`.offline`, `.cloudAPI`, ...) a request would.
  @discardableResult
  public func prepare() async throws -> [String] {
    try checkAvailable()
    return try await client.models(log: logHandler)
  }

  /// Answers with `POST /chat/completions`.
  public func respond(to request: ModelRequest) async throws -> GenerateContentResponse {
    try checkAvailable()
    try request.options.gemini?.validate()
    let body = try ChatCompletionRequest(
      request, model: name, stream: false, inlineMediaLimit: requestOptions.maximumInlineMediaBytes)
    return try await client.chatCompletion(body, log: request.logHandler)
  }

  /// Streams with `POST /chat/completions` and `stream: true`, one delta per
  /// chunk, token counts from the last (`stream_options.include_usage`).
  public func streamResponse(to request: ModelRequest) -> ResponseDeltaStream {
    do {
      try checkAvailable()
      try request.options.gemini?.validate()
      let body = try ChatCompletionRequest(
        request, model: name, stream: true, inlineMediaLimit: requestOptions.maximumInlineMediaBytes)
      return client.streamChatCompletion(body, log: request.logHandler)
    } catch {
      return .failing(error)
    }
  }

  private func checkAvailable() throws(HybridInferenceError) {
    if case .unavailable(let reason) = availability { throw .unavailable(model: name, reason: reason) }
  }

  var endpoint: OpenAIEndpoint { client.endpoint }

  /// The client of this model's endpoint, made once with the model (its
  /// reporters and error mapping are the same for every request).
  let client: OpenAIClient
}
